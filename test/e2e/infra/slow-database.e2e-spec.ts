import { Client } from 'pg';
import { closeAll, createAccount, RunningApi, startApi } from '../../support/test-apps';
import { HttpClient } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';

describe('a database slower than the statement timeout', () => {
  let api: RunningApi;
  let http: HttpClient;
  let db: Client;

  beforeAll(async () => {
    api = await startApi({ DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    http = new HttpClient(api.url, (await createAccount(api)).apiKey);
    db = new Client({ connectionString: api.config.databaseUrl });
    await db.connect();
  });

  afterAll(() => closeAll([() => db?.end(), () => api?.close()]));

  it('answers 503 service_unavailable with Retry-After, not a 500, when a statement runs past its timeout', async () => {
    const category = await http.post('/v1/categories', { name: 'Held back' });
    const created = await http.post('/v1/pets', { name: 'Held', categoryId: category.body.id });
    expect(created.status).toBe(201);
    await db.query('BEGIN');
    try {
      await db.query('SELECT 1 FROM pets WHERE id = $1 FOR UPDATE', [created.body.id]);
      const res = await http.patch(`/v1/pets/${created.body.id}`, { name: 'Waited' });
      expectErrorBody(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
    } finally {
      await db.query('ROLLBACK');
    }
    expect((await http.get(`/v1/pets/${created.body.id}`)).body.name).toBe('Held');
  });
});
