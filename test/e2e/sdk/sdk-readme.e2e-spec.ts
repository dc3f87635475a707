import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sdk from '@petstore/client';
import { PetstoreClient } from '@petstore/client';
import { legacySignatureHeader, standardWebhookHeaders } from '@app/webhooks';
import { DocBlock, transpileDocCode, typescriptBlocks } from '../../support/doc-code';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

const readme = readFileSync(join(__dirname, '..', '..', '..', 'packages', 'client', 'README.md'), 'utf8');
const AsyncFunction = (async () => undefined).constructor as new (
  ...params: string[]
) => (...args: unknown[]) => Promise<Record<string, unknown>>;

interface Run {
  /** What the example passed to console.log, one array per call. */
  printed: unknown[][];
  /** The variables the scenario asked the example for, as it left them. */
  scope: Record<string, unknown>;
}

/**
 * An example as written, with the variables it takes from earlier ones (`given`) and `process.env`
 * naming the live API; it runs as an async module body (top-level await), `@petstore/client` being the SDK.
 */
async function runExample(
  example: DocBlock,
  env: Record<string, string>,
  given: Record<string, unknown>,
  returns: string[],
  onPrint: (printed: unknown[][]) => void = () => undefined,
): Promise<Run> {
  const printed: unknown[][] = [];
  const console = {
    log: (...args: unknown[]) => {
      printed.push(args);
      onPrint(printed);
    },
  };
  const body = `${transpileDocCode(example.code)}\nreturn { ${returns.join(', ')} };`;
  const run = new AsyncFunction('require', 'exports', 'console', 'process', ...Object.keys(given), body);
  const require = (name: string) => ({ '@petstore/client': sdk })[name];
  const scope = await run(require, {}, console, { env }, ...Object.values(given));
  return { printed, scope };
}

/** A delivery's body, as the service signs and sends it. */
const eventBody = JSON.stringify({ id: 42, type: 'pet.created', resourceType: 'pet', resourceId: '7', data: {} });

describe('the SDK README: each TypeScript example runs against a live API', () => {
  let api: RunningApi;
  const realFetch = globalThis.fetch;

  beforeAll(async () => {
    api = await startApi();
    // The examples reach nothing but the API under test.
    globalThis.fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.hostname !== '127.0.0.1') throw new Error(`an example fetched ${url.href}`);
      return realFetch(input, init);
    };
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await api.close();
  });

  /** A new account's client, and the environment the examples read (PETSTORE_URL, PETSTORE_API_KEY). */
  const account = async () => {
    const { apiKey } = await createAccount(api, 'pro');
    return {
      petstore: new PetstoreClient({ apiKey, baseUrl: api.url }),
      env: { PETSTORE_URL: api.url, PETSTORE_API_KEY: apiKey },
    };
  };
  const stocked = async (petstore: PetstoreClient, quantity: number) => {
    const category = await petstore.categories.create({ name: `readme-${Date.now()}` });
    const pet = await petstore.pets.create({ name: 'Rex', categoryId: category.id });
    await petstore.inventory.update(pet.id, { quantity });
    return { category, pet };
  };
  const subscribed = (petstore: PetstoreClient) =>
    petstore.webhooks.create({ url: 'https://hooks.example.com/petstore', events: ['pet.created'] });

  const scenarios: Record<string, () => Promise<void>> = {
    'Create a client': async () => {
      const { env } = await account();
      const { printed, scope } = await runExample(example('Create a client'), env, {}, ['pet', 'petstore']);
      const petstore = scope.petstore as PetstoreClient;
      expect(printed).toEqual([[expect.objectContaining({ remaining: expect.any(Number), reset: expect.any(Date) })]]);
      expect((await petstore.inventory.get((scope.pet as sdk.Pet).id)).quantity).toBe(3);
    },

    'Create a client (2)': async () => {
      const { petstore, env } = await account();
      const { category } = await stocked(petstore, 1);
      const { scope } = await runExample(example('Create a client (2)'), env, { petstore, category }, ['data']);
      expect(scope.data).toEqual(category);
      expect((await petstore.categories.get(category.id)).name).toBe('Hounds');
    },

    Pagination: async () => {
      const { petstore, env } = await account();
      const { pet } = await stocked(petstore, 1);
      const webhook = await subscribed(petstore);
      const { printed } = await runExample(example('Pagination'), env, { petstore, webhook }, []);
      // The webhook has had no delivery: the second loop prints nothing.
      expect(printed).toEqual([[pet.id, 'Rex']]);
    },

    'Following events as they happen': async () => {
      const { petstore, env } = await account();
      await stocked(petstore, 2);
      const [processed] = (await petstore.call('GET', '/events', { query: { order: 'newest', limit: 1 } })).data;
      const { pet } = await stocked(petstore, 2);
      await petstore.orders.place({ petId: pet.id, quantity: 1, shipDate: new Date().toISOString() });
      const shutdown = new AbortController();
      let printed: unknown[][] = [];
      const stopAfterTwo = (lines: unknown[][]) => {
        printed = lines;
        if (lines.length === 2) shutdown.abort();
      };
      const given = { petstore, shutdown, lastProcessedId: processed.id };
      const run = runExample(example('Following events as they happen'), env, given, [], stopAfterTwo);
      await expect(run).rejects.toThrow(expect.objectContaining({ name: 'AbortError' }));
      // The events after lastProcessedId of the two types: the second pet's creation and its order.
      expect(printed.map(([id, type]) => [(id as number) > processed.id, type])).toEqual([
        [true, 'pet.created'],
        [true, 'order.placed'],
      ]);
    },

    'Recovering a webhook after an outage': async () => {
      const { petstore, env } = await account();
      const webhook = await subscribed(petstore);
      const { scope } = await runExample(example('Recovering a webhook after an outage'), env, { petstore, webhook }, [
        'queued',
        'skipped',
        'more',
      ]);
      expect(scope).toEqual({ queued: 0, skipped: 0, more: false });
    },

    Errors: async () => {
      const { petstore, env } = await account();
      const { pet } = await stocked(petstore, 3);
      const { printed } = await runExample(example('Errors'), env, { petstore, pet }, []);
      expect(printed).toEqual([[409, 'Only 3 unit(s) of this pet are in stock']]);
    },

    'Retries, timeouts, cancelling': async () => {
      const { petstore, env } = await account();
      const { pet } = await stocked(petstore, 1);
      const before = petstore.rateLimit!.remaining;
      await runExample(example('Retries, timeouts, cancelling'), env, { petstore, pet }, []);
      expect(petstore.rateLimit!.remaining).toBe(before - 1);
    },

    'Verifying webhooks': async () => {
      const { petstore, env } = await account();
      const { secret } = await subscribed(petstore);
      const req = { headers: standardWebhookHeaders([secret], '42', eventBody) };
      const given = { rawBody: Buffer.from(eventBody), req, secret };
      const { scope } = await runExample(example('Verifying webhooks'), env, given, ['event']);
      expect(scope.event).toEqual(JSON.parse(eventBody));
    },

    'Verifying webhooks (2)': async () => {
      const { petstore, env } = await account();
      const { secret } = await subscribed(petstore);
      const req = { headers: { 'petstore-signature': legacySignatureHeader([secret], eventBody), 'webhook-id': '42' } };
      const { scope } = await runExample(example('Verifying webhooks (2)'), env, { rawBody: eventBody, req, secret }, [
        'event',
      ]);
      expect(scope.event).toEqual(JSON.parse(eventBody));
    },
  };

  const examples = typescriptBlocks(readme);
  const example = (name: string) => examples.find((e) => e.name === name)!;

  it('has a scenario for every example and an example for every scenario', () => {
    expect(examples.map((e) => e.name).sort()).toEqual(Object.keys(scenarios).sort());
  });

  it.each(examples.map((e) => [e.name]))('runs the example under "%s"', (name) => scenarios[name]());
});
