import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';
import { HttpClient } from '../../support/http';

/** Own property keys added to a request while the app handled it. */
interface Added {
  route: string;
  keys: string[];
}

const ownKeys = (o: object) => new Set(Reflect.ownKeys(o));

// What the gate sets on a request (its key, policy and rate-limit decision) is declared with Fastify before the
// first request (decorateRequest), so every request keeps the shape its class gave it and property reads on it stay
// in V8's inline caches. This fails when a field is set that was not declared.
describe('API HTTP server: requests keep one shape', () => {
  let api: RunningApi;
  let http: HttpClient;
  const added: Added[] = [];

  beforeAll(async () => {
    const before = new WeakMap<FastifyRequest, Set<string | symbol>>();
    api = await startApi(
      {},
      {
        probe: (app) => {
          const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
          fastify.addHook('onRequest', async (req) => void before.set(req, ownKeys(req)));
          fastify.addHook('onResponse', async (req) => {
            const keys = before.get(req);
            if (keys)
              added.push({
                route: `${req.method} ${req.url}`,
                keys: [...ownKeys(req)].filter((k) => typeof k === 'string' && !keys.has(k)).map(String),
              });
          });
        },
      },
    );
    http = new HttpClient(api.url, (await createAccount(api)).apiKey);
  });
  afterAll(() => api.close());

  it('adds no property to a request on the hot paths (reads, writes, queued messages, errors)', async () => {
    const category = await http.post('/v1/categories', { name: 'Shapes' });
    const pet = await http.post('/v1/pets', { name: 'Rex', categoryId: category.body.id, status: 'available' });
    expect(pet.status).toBe(201);
    const answers = [
      await http.get(`/v1/pets/${pet.body.id as number}`),
      await http.get('/v1/pets?limit=2'),
      await http.post('/v1/messages', { message: 'hello' }),
      await http.get('/v1/no-such-route'),
      await new HttpClient(http.baseUrl).get('/v1/pets'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 202, 404, 401]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(added.length).toBeGreaterThanOrEqual(7);
    expect(added.filter((a) => a.keys.length)).toEqual([]);
  });
});
