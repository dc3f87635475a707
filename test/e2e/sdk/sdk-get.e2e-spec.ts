import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PetstoreClient, PetstoreError } from '@petstore/client';
import { createAccount, ROOMY_LIMITS, RunningApi, startApiWithAccount } from '../../support/test-apps';

const root = join(__dirname, '..', '..', '..');
const run = promisify(execFile);

/**
 * The SDK's `get` methods tell the truth: each answers its model (so `tsc --strict` rightly accepts
 * `(await c.pets.get(id)).name`), and a record that is not there, or is another account's, is thrown
 * as PetstoreError `not_found` (404), never resolved as `undefined`.
 */
describe('SDK: every get answers its model or throws not_found', () => {
  let api: RunningApi;
  let client: PetstoreClient;
  let other: PetstoreClient;

  beforeAll(async () => {
    let apiKey: string;
    ({ api, apiKey } = await startApiWithAccount('enterprise', ROOMY_LIMITS));
    client = new PetstoreClient({ apiKey, baseUrl: api.url });
    other = new PetstoreClient({
      apiKey: (await createAccount(api, 'enterprise', ROOMY_LIMITS)).apiKey,
      baseUrl: api.url,
    });
  });
  afterAll(() => api.close());

  it('type-checks test/sdk-types (tsc --strict --noUncheckedIndexedAccess over the SDK source): no get answers undefined', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    // A failed run rejects with the same stdout: tsc's errors, shown by the assertion.
    const { stdout } = await run(process.execPath, [tsc, '-p', 'test/sdk-types/tsconfig.json'], { cwd: root }).catch(
      (error: { stdout: string }) => error,
    );
    expect(stdout).toBe('');
  }, 60_000);

  /** A missing record and another account's: both PetstoreError not_found with status 404. */
  const expectNotFound = async (...gets: Array<() => Promise<unknown>>) => {
    for (const get of gets) {
      const outcome = await get().then(
        (answer) => ({ answer }),
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(PetstoreError);
      expect(outcome).toEqual(expect.objectContaining({ code: 'not_found', status: 404 }));
    }
  };

  const stockedPet = async () => {
    const category = await client.categories.create({ name: `get-${Date.now()}-${Math.random()}` });
    return { category, pet: await client.pets.create({ name: 'Rex', categoryId: category.id }) };
  };

  it("pets.get: the pet, else not_found (an unknown id, another account's pet, a deleted one)", async () => {
    const { pet } = await stockedPet();
    expect(await client.pets.get(pet.id)).toEqual(pet);
    const gone = (await stockedPet()).pet;
    await client.pets.delete(gone.id);
    await expectNotFound(
      () => client.pets.get(999_999_999),
      () => other.pets.get(pet.id),
      () => client.pets.get(gone.id),
    );
    const error = (await client.pets.get(999_999_999).catch((e: unknown) => e)) as PetstoreError;
    expect(error.message).toBe('Pet not found');
    expect(error.requestId).toEqual(expect.any(String));
  });

  it('pets.getById (deprecated): the pet, else not_found', async () => {
    const { pet } = await stockedPet();
    expect(await client.pets.getById(pet.id)).toEqual(pet);
    await expectNotFound(
      () => client.pets.getById(999_999_999),
      () => other.pets.getById(pet.id),
    );
  });

  it('categories.get: the category, else not_found', async () => {
    const { category } = await stockedPet();
    expect(await client.categories.get(category.id)).toEqual(category);
    await expectNotFound(
      () => client.categories.get(999_999_999),
      () => other.categories.get(category.id),
    );
  });

  it('orders.get: the order, else not_found', async () => {
    const { pet } = await stockedPet();
    const order = await client.orders.place({ petId: pet.id, quantity: 1 });
    const id = order.id!; // optional in the interface's Order schema; an answer always has it
    expect(await client.orders.get(id)).toEqual(expect.objectContaining({ id, petId: pet.id }));
    await expectNotFound(
      () => client.orders.get(999_999_999),
      () => other.orders.get(id),
    );
  });

  it("inventory.get: the pet's stock, else not_found", async () => {
    const { pet } = await stockedPet();
    expect(await client.inventory.get(pet.id)).toEqual(expect.objectContaining({ petId: pet.id, quantity: 1 }));
    await expectNotFound(
      () => client.inventory.get(999_999_999),
      () => other.inventory.get(pet.id),
    );
  });

  it('messages.get: the message, else not_found', async () => {
    const message = await client.messages.create({ message: 'hello' });
    expect(await client.messages.get(message.id)).toEqual(expect.objectContaining({ id: message.id }));
    await expectNotFound(
      () => client.messages.get(`msg_${'0'.repeat(28)}`),
      () => other.messages.get(message.id),
    );
  });

  it('webhooks.get: the webhook, else not_found', async () => {
    const { secret, ...webhook } = await client.webhooks.create({
      url: 'https://hooks.example.com/petstore',
      events: ['pet.created'],
    });
    expect(secret).toMatch(/^whsec_/);
    expect(await client.webhooks.get(webhook.id)).toEqual(
      expect.objectContaining({ id: webhook.id, url: webhook.url }),
    );
    await expectNotFound(
      () => client.webhooks.get(999_999_999),
      () => other.webhooks.get(webhook.id),
    );
  });

  it("account.get: the calling key's account (there is always one)", async () => {
    expect(await client.account.get()).toEqual(expect.objectContaining({ plan: 'enterprise' }));
  });
});
