import { DataSource } from 'typeorm';
import { NAME_SEARCH_WINDOW } from '@app/catalog';
import { HttpClient } from './support/http';
import { createAccount, RunningApi, startApi } from './support/test-apps';

/** A name search on a catalogue larger than one search window (10,000 pets) per page. */
describe('GET /v1/pets?name= on a large catalogue', () => {
  let api: RunningApi;
  let client: HttpClient;
  let needles: number[];
  let ids: number[];

  beforeAll(async () => {
    api = await startApi();
    const { accountId, apiKey } = await createAccount(api);
    client = new HttpClient(api.url, apiKey);
    const db = api.app.get(DataSource);
    const [{ id: category }] = await db.query(
      `INSERT INTO categories (account_id, name) VALUES ($1, 'big') RETURNING id`,
      [accountId],
    );
    // 25,000 pets; three of them (the 3rd, the 15,000th, the 24,000th) named with a needle.
    ids = (
      await db.query(
        `INSERT INTO pets (account_id, category_id, name, status, stock)
         SELECT $1, $2, CASE WHEN g IN (3, 15000, 24000) THEN 'Needle ' || g ELSE 'pet ' || g END, 'available', 1
           FROM generate_series(1, 25000) g ORDER BY g RETURNING id`,
        [accountId, category],
      )
    ).map((r: { id: number }) => r.id);
    ids.sort((a, b) => a - b);
    needles = [ids[2], ids[14_999], ids[23_999]];
  });
  afterAll(() => api.close());

  const next = (link: string | null) => (link ? /<\/v1([^>]+)>; rel="next"/.exec(link)![1] : undefined);

  it('answers a page from the first window, linking on from where the window ended', async () => {
    const first = await client.get('/v1/pets?limit=20&name=needle');
    expect(first.status).toBe(200);
    expect(first.body.map((p: { id: number }) => p.id)).toEqual([needles[0]]);
    expect(next(first.headers.get('link'))).toBe(`/pets?limit=20&name=needle&after=${ids[NAME_SEARCH_WINDOW - 1]}`);
  });

  it('finds every match, in id order, by following the links to the end', async () => {
    const found: number[] = [];
    let path: string | undefined = '/pets?limit=20&name=needle';
    let pages = 0;
    while (path) {
      const res = await client.get(`/v1${path}`);
      found.push(...res.body.map((p: { id: number }) => p.id));
      path = next(res.headers.get('link'));
      pages++;
    }
    expect(found).toEqual(needles);
    expect(pages).toBe(3);
  });
});
