import { DataSource } from 'typeorm';
import { HttpClient } from '../../support/http';
import { RunningApi, startApiWithAccount } from '../../support/test-apps';

/**
 * A name search over a catalogue of 25,000 pets (more than the 10,000 a page once read) answers
 * its matches in one request: no page short of `limit` links on, so none is empty with a link.
 */
describe('GET /v1/pets?name= on a large catalogue', () => {
  let api: RunningApi;
  let client: HttpClient;
  let needles: number[];

  beforeAll(async () => {
    let accountId: number;
    ({ api, http: client, accountId } = await startApiWithAccount());
    const db = api.app.get(DataSource);
    const [{ id: category }] = await db.query(
      `INSERT INTO categories (account_id, name) VALUES ($1, 'big') RETURNING id`,
      [accountId],
    );
    // Three needles (the 3rd, the 15,000th, the 24,000th pet); the 20,000th is named with LIKE's wildcards.
    const ids: number[] = (
      await db.query(
        `INSERT INTO pets (account_id, category_id, name, status, stock)
         SELECT $1, $2, CASE WHEN g IN (3, 15000, 24000) THEN 'Needle ' || g WHEN g = 20000 THEN '100%_\\off'
                             ELSE 'pet ' || g END, 'available', 1
           FROM generate_series(1, 25000) g ORDER BY g RETURNING id`,
        [accountId, category],
      )
    ).map((r: { id: number }) => Number(r.id));
    ids.sort((a, b) => a - b);
    needles = [ids[2], ids[14_999], ids[23_999]];
    // VACUUM moves the new rows from the index's pending list into its tree, as autovacuum would.
    await db.query('VACUUM ANALYZE pets');
  });
  afterAll(() => api.close());

  const idsOf = (res: { body: { id: number }[] }) => res.body.map((p) => p.id);

  it('answers every match, however far into the catalogue, on the first page without a next link', async () => {
    const res = await client.get('/v1/pets?limit=20&name=needle');
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(needles);
    expect(res.headers.get('link')).toBeNull();
  });

  it('answers a search that matches nothing with [] and no next link, in one request', async () => {
    for (const name of ['zqx', encodeURIComponent('%%%'), '___']) {
      const res = await client.get(`/v1/pets?limit=20&name=${name}`);
      expect({ name, status: res.status, body: res.body, link: res.headers.get('link') }).toEqual({
        name,
        status: 200,
        body: [],
        link: null,
      });
    }
  });

  it('pages a search by id: a full page links on after its last match, the last page does not', async () => {
    const first = await client.get('/v1/pets?limit=2&name=NEEDLE');
    expect(idsOf(first)).toEqual(needles.slice(0, 2));
    expect(first.headers.get('link')).toBe(`</v1/pets?limit=2&name=NEEDLE&after=${needles[1]}>; rel="next"`);
    const second = await client.get(`/v1/pets?limit=2&name=NEEDLE&after=${needles[1]}`);
    expect(idsOf(second)).toEqual([needles[2]]);
    expect(second.headers.get('link')).toBeNull();
  });

  it('matches %, _ and \\ literally', async () => {
    const res = await client.get(`/v1/pets?name=${encodeURIComponent('%_\\')}`);
    expect(res.body.map((p: { name: string }) => p.name)).toEqual(['100%_\\off']);
  });

  it('refuses a name of fewer than 3 characters with 400 invalid_parameter saying so', async () => {
    for (const name of ['a', 'ne', '%_']) {
      const res = await client.get(`/v1/pets?name=${encodeURIComponent(name)}`);
      expect({ name, status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        name,
        status: 400,
        code: 'invalid_parameter',
        message: expect.stringContaining('name must be 3 to 200 characters'),
      });
    }
  });
});
