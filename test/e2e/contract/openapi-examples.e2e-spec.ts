import { randomUUID } from 'node:crypto';
import { HttpClient } from '../../support/http';
import { createAccount, ROOMY_LIMITS, RunningApi, startApi } from '../../support/test-apps';

// The document is walked as plain JSON.
type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/**
 * Issue 63.1: a generated client or a reader sends the document's own request examples as they are. Every operation is
 * sent with its request body example and its parameters' examples to a live API (with the admin key of a fresh account)
 * and must get its documented success. Ids an example cannot know (path parameters, `x-references` fields) are those of
 * records made for it first; nothing else is changed, so an example that expires (a date now past) fails here.
 */
describe('the OpenAPI document’s request examples', () => {
  let api: RunningApi;
  let http: HttpClient;
  let doc: Json;

  beforeAll(async () => {
    api = await startApi();
    http = new HttpClient(api.url, (await createAccount(api, 'enterprise', ROOMY_LIMITS)).apiKey);
    doc = (await http.get('/openapi.json')).body;
  });
  afterAll(() => api.close());

  const created = async (path: string, body?: object): Promise<{ id: number | string }> => {
    const res = await http.post(path, body);
    if (res.status >= 300) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
    return res.body;
  };
  const category = async () => (await created('/v1/categories', { name: `examples-${randomUUID()}` })).id;
  // A pet with units in stock, so an order example can be placed.
  const pet = async () => {
    const id = (await created('/v1/pets', { name: 'example', categoryId: await category() })).id;
    expect((await http.put(`/v1/store/inventory/${id}`, { quantity: 100 })).status).toBe(200);
    return id;
  };
  const webhook = async () =>
    (await created('/v1/webhooks', { url: 'https://93.184.216.34/examples', events: ['webhook.disabled'] })).id;

  /** A fresh record for each id an example refers to: a DELETE example then never finds another example's record gone. */
  const RECORDS: Record<string, () => Promise<number | string>> = {
    Category: category,
    Pet: pet,
  };
  async function pathIds(path: string): Promise<Record<string, number | string>> {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const ids: Record<string, number | string> = {};
    for (const name of names) {
      if (name === 'keyId') ids.keyId = (await created('/v1/keys', { name: 'example target' })).id;
      else if (name === 'webhookId') ids.webhookId = await webhook();
      else if (name === 'deliveryId') ids.deliveryId = (await created(`/v1/webhooks/${ids.webhookId}/test`)).id;
      else if (name === 'categoryId') ids.categoryId = await category();
      else if (name === 'petId') ids.petId = await pet();
      else if (name === 'orderId') ids.orderId = (await created('/v1/store/orders', { petId: await pet() })).id;
      else if (name === 'id' && path.startsWith('/messages/'))
        ids.id = (await created('/v1/messages', { message: 'example' })).id;
      else throw new Error(`no record for the path parameter ${name} of ${path}: add one here`);
    }
    return ids;
  }

  const schemaOf = (schema: Json | undefined): Json | undefined =>
    schema?.$ref ? doc.components.schemas[String(schema.$ref).split('/').pop()!] : schema;

  /** The example with each `x-references` field (NewOrder.petId, NewPet.categoryId) set to a record of this account. */
  async function withRecords(example: unknown, schema: Json | undefined): Promise<unknown> {
    const s = schemaOf(schema);
    if (!s?.properties || !example || typeof example !== 'object') return example;
    const out: Json = { ...example };
    for (const [name, property] of Object.entries(s.properties as Record<string, Json>)) {
      const record = property['x-references'] as string | undefined;
      if (record && out[name] !== undefined) {
        if (!RECORDS[record]) throw new Error(`no record for x-references ${record}: add one here`);
        out[name] = await RECORDS[record]();
      }
    }
    return out;
  }

  const parameter = (p: Json): Json => (p.$ref ? doc.components.parameters[String(p.$ref).split('/').pop()!] : p);

  it('has request examples to send (request bodies and parameters)', () => {
    const operations = Object.values(doc.paths as Json).flatMap((item) => METHODS.filter((m) => item[m]));
    expect(operations.length).toBeGreaterThan(30);
    const bodies = Object.values(doc.paths as Json).flatMap((item: Json) =>
      METHODS.filter((m) => item[m]?.requestBody?.content?.['application/json']?.example !== undefined),
    );
    expect(bodies.length).toBeGreaterThan(10);
  });

  it('answers every operation sent with its examples with the documented success', async () => {
    const outcomes: Json[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const method of METHODS.filter((m) => item[m])) {
        const op = item[method];
        const ids = await pathIds(path);
        const query = new URLSearchParams();
        for (const p of ((op.parameters ?? []) as Json[]).map(parameter)) {
          const example = p.example ?? p.schema?.example;
          if (example === undefined || p.in === 'path' || p.in === 'header') continue;
          if (p.in === 'query') query.set(p.name, String(example));
        }
        const media = op.requestBody?.content?.['application/json'];
        const body = media ? await withRecords(media.example, media.schema) : undefined;
        const url = `/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => String(ids[name]))}${query.size ? `?${query}` : ''}`;
        const res = await http.request(method.toUpperCase(), url, body === undefined ? {} : { body });
        const success = Object.keys(op.responses).find((status) => status.startsWith('2'));
        // A deprecated operation past its sunset answers 410 as documented; its examples are not at fault.
        const sunset = op['x-sunset'] && Date.parse(op['x-sunset']) <= Date.now();
        outcomes.push({
          operation: `${method.toUpperCase()} ${path}`,
          status: res.status,
          body: res.status >= 400 ? res.body : undefined,
        });
        expect(success).toBeDefined();
        expect(outcomes.at(-1)).toEqual({
          operation: `${method.toUpperCase()} ${path}`,
          status: sunset ? 410 : Number(success),
          body: sunset ? expect.objectContaining({ code: 'endpoint_sunset' }) : undefined,
        });
      }
    }
    expect(outcomes.length).toBeGreaterThan(30);
  });
});
