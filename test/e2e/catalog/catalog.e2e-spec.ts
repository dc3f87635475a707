import { DataSource } from 'typeorm';
import { Clock } from '@app/config';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';
import { HttpClient, HttpResponse } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';

/** A clock the test can move, to cross the sunset of GET /pets/{petId} without waiting. */
class MovableClock extends Clock {
  offsetMs = 0;
  override nowMs(): number {
    return Date.now() + this.offsetMs;
  }
}

/** Follows `Link: rel="next"` from the first page to the last; returns the pages' ids. */
async function allPages(http: HttpClient, firstPath: string): Promise<{ pages: number[][]; links: string[] }> {
  const pages: number[][] = [];
  const links: string[] = [];
  let path: string | undefined = firstPath;
  while (path) {
    const res: HttpResponse<any> = await http.get(path);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    pages.push(res.body.map((p: { id: number }) => p.id));
    const link: string | null = res.headers.get('link');
    if (link) links.push(link);
    path = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
    if (link) expect(path).toBeDefined();
  }
  return { pages, links };
}

describe('catalog: categories and pets', () => {
  let api: RunningApi;
  let http: HttpClient;
  let other: HttpClient;
  const clock = new MovableClock();

  beforeAll(async () => {
    api = await startApi({}, { clock });
    http = new HttpClient(api.url, (await createAccount(api)).apiKey);
    other = new HttpClient(api.url, (await createAccount(api)).apiKey);
  });
  afterAll(() => api.close());

  async function category(name: string, client = http): Promise<number> {
    const res = await client.post('/v1/categories', { name });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  async function pet(name: string, categoryId: number, status?: string, client = http): Promise<any> {
    const res = await client.post('/v1/pets', { name, categoryId, ...(status ? { status } : {}) });
    expect(res.status).toBe(201);
    return res.body;
  }

  describe('categories', () => {
    it('creates (201 + Location), reads with an ETag, lists, updates and deletes', async () => {
      const created = await http.post('/v1/categories', { name: 'Dogs', description: 'Domestic dogs' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number), name: 'Dogs', description: 'Domestic dogs' });
      expect(created.headers.get('location')).toBe(`/v1/categories/${created.body.id}`);
      const id = created.body.id;

      const read = await http.get(`/v1/categories/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
      const etag = read.headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/);
      const notModified = await http.get(`/v1/categories/${id}`, { headers: { 'If-None-Match': etag! } });
      expect(notModified.status).toBe(304);
      expect(notModified.text).toBe('');

      const listed = await http.get('/v1/categories');
      expect(listed.body).toEqual(expect.arrayContaining([created.body]));

      const stale = await http.patch(`/v1/categories/${id}`, { name: 'x' }, { headers: { 'If-Match': '"stale"' } });
      expectErrorBody(stale, 412, 'precondition_failed');
      const patched = await http.patch(
        `/v1/categories/${id}`,
        { name: 'Hounds', description: null },
        { headers: { 'If-Match': etag! } },
      );
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual({ id, name: 'Hounds' });
      expect(patched.headers.get('etag')).not.toBe(etag);
      expect((await http.get(`/v1/categories/${id}`, { headers: { 'If-None-Match': etag! } })).status).toBe(200);

      expectErrorBody(
        await http.delete(`/v1/categories/${id}`, { headers: { 'If-Match': etag! } }),
        412,
        'precondition_failed',
      );
      expect((await http.delete(`/v1/categories/${id}`)).status).toBe(204);
      expectErrorBody(await http.get(`/v1/categories/${id}`), 404, 'not_found');
      expectErrorBody(await http.delete(`/v1/categories/${id}`), 404, 'not_found');
    });

    it('refuses a duplicate name in any case (409 category_exists), on create and on rename', async () => {
      await category('Cats');
      expectErrorBody(await http.post('/v1/categories', { name: 'cATS' }), 409, 'category_exists');
      const birds = await category('Birds');
      expectErrorBody(await http.patch(`/v1/categories/${birds}`, { name: 'CATS' }), 409, 'category_exists');
      // Per account: another account may use the name.
      expect((await other.post('/v1/categories', { name: 'Cats' })).status).toBe(201);
    });

    it('refuses to delete a category pets use (409 category_in_use)', async () => {
      const fish = await category('Fish');
      const p = await pet('Nemo', fish);
      expectErrorBody(await http.delete(`/v1/categories/${fish}`), 409, 'category_in_use');
      expect((await http.delete(`/v1/pets/${p.id}`)).status).toBe(204);
      expect((await http.delete(`/v1/categories/${fish}`)).status).toBe(204);
    });

    it('validates bodies (validation_failed) and parameters (invalid_parameter)', async () => {
      const res = await http.post('/v1/categories', { name: '', description: 5 });
      expectErrorBody(res, 400, 'validation_failed');
      expect([...new Set(res.body.details.map((d: { field: string }) => d.field))].sort()).toEqual([
        'description',
        'name',
      ]);
      expectErrorBody(await http.get('/v1/categories?limit=0'), 400, 'invalid_parameter');
      expectErrorBody(await http.get('/v1/categories/abc'), 400, 'invalid_parameter');
    });
  });

  describe('pets', () => {
    let dogs: number;
    let cats: number;

    beforeAll(async () => {
      dogs = await category('Pet dogs');
      cats = await category('Pet cats');
    });

    it('creates available (default) or sold pets, refuses pending, answers 201 with Location', async () => {
      const rex = await http.post('/v1/pets', { name: 'Rex', categoryId: dogs });
      expect(rex.status).toBe(201);
      expect(rex.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: dogs, status: 'available' });
      expect(rex.headers.get('location')).toBe(`/v1/pets/${rex.body.id}`);
      const sold = await pet('Old Rex', dogs, 'sold');
      expect(sold.status).toBe('sold');
      expect((await http.get(`/v1/store/inventory/${rex.body.id}`)).body).toEqual(
        expect.objectContaining({ quantity: 1 }),
      );

      const pending = await http.post('/v1/pets', { name: 'P', categoryId: dogs, status: 'pending' });
      expectErrorBody(pending, 400, 'validation_failed');
      expect(pending.body.details).toEqual([{ field: 'status', message: expect.stringContaining('pending') }]);
    });

    it('requires a category of the same account (400 validation_failed naming categoryId)', async () => {
      const foreign = await category('Foreign', other);
      for (const categoryId of [foreign, 999_999_999]) {
        const res = await http.post('/v1/pets', { name: 'Stray', categoryId });
        expectErrorBody(res, 400, 'validation_failed');
        expect(res.body.details).toEqual([{ field: 'categoryId', message: expect.any(String) }]);
      }
      const p = await pet('Homed', dogs);
      const moved = await http.patch(`/v1/pets/${p.id}`, { categoryId: foreign });
      expectErrorBody(moved, 400, 'validation_failed');
      expect(moved.body.details[0].field).toBe('categoryId');
      expectErrorBody(await http.post('/v1/pets', { categoryId: dogs }), 400, 'validation_failed');
    });

    it('updates name, category and status (a status sets the stock it implies) and deletes', async () => {
      const p = await pet('Tom', cats);
      const renamed = await http.patch(`/v1/pets/${p.id}`, { name: 'Tommy', categoryId: dogs });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({ id: p.id, name: 'Tommy', categoryId: dogs, status: 'available' });
      const sold = await http.patch(`/v1/pets/${p.id}`, { status: 'sold' });
      expect(sold.body.status).toBe('sold');
      expect((await http.get(`/v1/store/inventory/${p.id}`)).body.quantity).toBe(0);
      const back = await http.patch(`/v1/pets/${p.id}`, { status: 'available' });
      expect(back.body.status).toBe('available');
      expect((await http.get(`/v1/store/inventory/${p.id}`)).body.quantity).toBe(1);
      expectErrorBody(await http.patch(`/v1/pets/${p.id}`, { status: 'pending' }), 400, 'validation_failed');
      expectErrorBody(await http.patch(`/v1/pets/${p.id}`, { name: '' }), 400, 'validation_failed');
      expect((await http.delete(`/v1/pets/${p.id}`)).status).toBe(204);
      expectErrorBody(await http.get(`/v1/pets/${p.id}`), 404, 'not_found');
      expectErrorBody(await http.patch(`/v1/pets/${p.id}`, { name: 'ghost' }), 404, 'not_found');
    });

    it('refuses to delete a pet with open orders (409 pet_has_open_orders)', async () => {
      const p = await pet('Ordered', dogs);
      const shipDate = new Date(Date.now() + 3600_000).toISOString();
      const order = await http.post('/v1/store/orders', { petId: p.id, shipDate });
      expect(order.status).toBe(201);
      expectErrorBody(await http.delete(`/v1/pets/${p.id}`), 409, 'pet_has_open_orders');
      expect((await http.delete(`/v1/store/orders/${order.body.id}`)).status).toBe(204);
      expect((await http.delete(`/v1/pets/${p.id}`)).status).toBe(204);
    });

    it('GET /pets/{petId}: ETag, If-None-Match 304, If-Match 412 on PATCH and DELETE', async () => {
      const p = await pet('Etag', dogs);
      const read = await http.get(`/v1/pets/${p.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(p);
      const etag = read.headers.get('etag')!;
      expect(etag).toMatch(/^"[^"]+"$/);
      expect((await http.get(`/v1/pets/${p.id}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
      expect((await http.get(`/v1/pets/${p.id}`, { headers: { 'If-None-Match': `W/${etag}` } })).status).toBe(304);
      expect((await http.get(`/v1/pets/${p.id}`, { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);

      const patched = await http.patch(`/v1/pets/${p.id}`, { name: 'Etag 2' }, { headers: { 'If-Match': etag } });
      expect(patched.status).toBe(200);
      const newTag = patched.headers.get('etag')!;
      expect(newTag).not.toBe(etag);
      expectErrorBody(
        await http.patch(`/v1/pets/${p.id}`, { name: 'lost update' }, { headers: { 'If-Match': etag } }),
        412,
        'precondition_failed',
      );
      expect((await http.get(`/v1/pets/${p.id}`)).body.name).toBe('Etag 2');
      expect((await http.get(`/v1/pets/${p.id}`, { headers: { 'If-None-Match': etag } })).status).toBe(200);
      expectErrorBody(
        await http.delete(`/v1/pets/${p.id}`, { headers: { 'If-Match': etag } }),
        412,
        'precondition_failed',
      );
      expect((await http.delete(`/v1/pets/${p.id}`, { headers: { 'If-Match': newTag } })).status).toBe(204);
    });

    it('GET /pets/{petId} is deprecated: Deprecation, Sunset, successor Link; 410 after the sunset', async () => {
      const p = await pet('Deprecated', dogs);
      const res = await http.get(`/v1/pets/${p.id}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
      expect(Number(res.headers.get('deprecation')!.slice(1)) * 1000).toBeLessThanOrEqual(Date.now());
      expect(res.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
      expect(res.headers.get('link')).toBe(`</v1/pets?ids=${p.id}>; rel="successor-version"`);
      const successor = await http.get(`/v1/pets?ids=${p.id}`);
      expect(successor.body).toEqual([p]);

      const doc = await new HttpClient(api.url).get('/openapi.json');
      const op = doc.body.paths['/pets/{petId}'].get;
      expect(op.deprecated).toBe(true);
      expect(op['x-sunset']).toBe('2027-06-30T00:00:00.000Z');
      expect(doc.body.paths['/pets'].get.deprecated).toBeUndefined();
      for (const name of ['NewPet', 'Pet', 'NewCategory', 'Category'])
        expect(doc.body.components.schemas[name]).toBeDefined();

      clock.offsetMs = api.config.petGetSunsetAt.getTime() - Date.now() + 1000;
      try {
        const gone = await http.get(`/v1/pets/${p.id}`);
        expectErrorBody(gone, 410, 'endpoint_sunset');
        expect(gone.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
        expect((await http.get(`/v1/pets?ids=${p.id}`)).status).toBe(200);
      } finally {
        clock.offsetMs = 0;
      }
      expect((await http.get(`/v1/pets/${p.id}`)).status).toBe(200);
    });
  });

  describe('pet lists: filters and keyset pagination', () => {
    let account: HttpClient;
    let birds: number;
    let reptiles: number;
    const all: any[] = [];

    beforeAll(async () => {
      account = new HttpClient(api.url, (await createAccount(api)).apiKey);
      birds = await category('Birds', account);
      reptiles = await category('Reptiles', account);
      const names = ['Polly', 'Tweety', 'Iago', 'Zazu', 'Hedwig', '50%_off\\bird'];
      for (let i = 0; i < 25; i++) {
        const name = `${names[i % names.length]} ${i}`;
        all.push(await pet(name, i % 3 === 0 ? reptiles : birds, i % 4 === 0 ? 'sold' : undefined, account));
      }
    });

    it('pages with limit and after, announcing the next page, with no overlap or gap', async () => {
      const { pages, links } = await allPages(account, '/v1/pets?limit=7');
      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 4]);
      expect(pages.flat()).toEqual(all.map((p) => p.id));
      expect(links[0]).toBe(`</v1/pets?limit=7&after=${pages[0][6]}>; rel="next"`);
      const defaults = await account.get('/v1/pets');
      expect(defaults.body).toHaveLength(20);
      expect(defaults.headers.get('link')).toBe(`</v1/pets?limit=20&after=${all[19].id}>; rel="next"`);
      const exact = await account.get('/v1/pets?limit=25');
      expect(exact.body).toHaveLength(25);
      expect(exact.headers.get('link')).toBeNull();
      expect((await account.get(`/v1/pets?after=${all[24].id}`)).body).toEqual([]);
    });

    it('filters by status, categoryId, name (case-insensitive substring, literal % and _) and ids', async () => {
      const ids = (res: { body: { id: number }[] }) => res.body.map((p) => p.id);
      const sold = await account.get('/v1/pets?status=sold&limit=100');
      expect(ids(sold)).toEqual(all.filter((p) => p.status === 'sold').map((p) => p.id));
      expect(ids(await account.get('/v1/pets?status=available&limit=100'))).toEqual(
        all.filter((p) => p.status === 'available').map((p) => p.id),
      );
      expect(ids(await account.get(`/v1/pets?categoryId=${reptiles}&limit=100`))).toEqual(
        all.filter((p) => p.categoryId === reptiles).map((p) => p.id),
      );
      expect(ids(await account.get('/v1/pets?name=POLL&limit=100'))).toEqual(
        all.filter((p) => p.name.startsWith('Polly')).map((p) => p.id),
      );
      expect(ids(await account.get(`/v1/pets?name=${encodeURIComponent('%_OFF\\')}`))).toEqual(
        all.filter((p) => p.name.startsWith('50%')).map((p) => p.id),
      );
      expect(ids(await account.get(`/v1/pets?name=${encodeURIComponent('0%_')}`))).toHaveLength(
        all.filter((p) => p.name.includes('0%_')).length,
      );
      expect(ids(await account.get(`/v1/pets?name=${encodeURIComponent('%%%')}`))).toEqual([]);
      const some = [all[3].id, all[1].id, all[10].id];
      expect(ids(await account.get(`/v1/pets?ids=${some.join(',')}`))).toEqual([...some].sort((a, b) => a - b));
      const combined = await account.get(`/v1/pets?status=available&categoryId=${birds}&name=wEe`);
      expect(ids(combined)).toEqual(
        all
          .filter((p) => p.status === 'available' && p.categoryId === birds && p.name.toLowerCase().includes('wee'))
          .map((p) => p.id),
      );
    });

    it('keeps the filters in the next link and pages filtered results without gaps', async () => {
      const expected = all.filter((p) => p.categoryId === birds && p.status === 'available').map((p) => p.id);
      const { pages, links } = await allPages(account, `/v1/pets?status=available&categoryId=${birds}&limit=3`);
      expect(pages.flat()).toEqual(expected);
      expect(links[0]).toBe(`</v1/pets?limit=3&status=available&categoryId=${birds}&after=${pages[0][2]}>; rel="next"`);
      const byIds = await account.get(
        `/v1/pets?ids=${all
          .map((p) => p.id)
          .slice(0, 5)
          .join(',')}&limit=2`,
      );
      expect(byIds.headers.get('link')).toMatch(
        /^<\/v1\/pets\?limit=2&ids=\d+,\d+,\d+,\d+,\d+&after=\d+>; rel="next"$/,
      );
    });

    it('answers malformed or out-of-range parameters with 400 invalid_parameter', async () => {
      for (const query of [
        'limit=0',
        'limit=101',
        'limit=abc',
        'limit=1.5',
        'limit=1&limit=2',
        'after=0',
        'after=-3',
        'after=x',
        'status=lost',
        'categoryId=abc',
        'ids=1,x',
        'ids=',
        'name=',
        'name=ab',
        'unknown=1',
      ]) {
        const res = await account.get(`/v1/pets?${query}`);
        expect({ query, status: res.status, code: res.body.code }).toEqual({
          query,
          status: 400,
          code: 'invalid_parameter',
        });
      }
      expectErrorBody(await account.get('/v1/pets/0'), 400, 'invalid_parameter');
    });
  });

  describe('tenant isolation', () => {
    it("another account's pets and categories answer 404 and never appear in its lists", async () => {
      const cat = await category('Private');
      const p = await pet('Secret', cat);
      for (const res of [
        await other.get(`/v1/pets/${p.id}`),
        await other.patch(`/v1/pets/${p.id}`, { name: 'stolen' }),
        await other.delete(`/v1/pets/${p.id}`),
        await other.get(`/v1/categories/${cat}`),
        await other.patch(`/v1/categories/${cat}`, { name: 'stolen' }),
        await other.delete(`/v1/categories/${cat}`),
      ]) {
        expectErrorBody(res, 404, 'not_found');
      }
      expect((await other.get(`/v1/pets?ids=${p.id}`)).body).toEqual([]);
      expect((await other.get('/v1/pets?limit=100')).body.map((x: any) => x.id)).not.toContain(p.id);
      expect((await other.get('/v1/categories?limit=100')).body.map((x: any) => x.id)).not.toContain(cat);
      expect((await http.get(`/v1/pets/${p.id}`)).body).toEqual(p);
    });
  });

  it('records a domain event for every catalog write', async () => {
    const { accountId, apiKey } = await createAccount(api);
    const client = new HttpClient(api.url, apiKey);
    const cat = await category('Evented', client);
    await client.patch(`/v1/categories/${cat}`, { description: 'd' });
    const p = await pet('Ev', cat, undefined, client);
    await client.patch(`/v1/pets/${p.id}`, { status: 'sold' });
    await client.delete(`/v1/pets/${p.id}`);
    await client.delete(`/v1/categories/${cat}`);
    const rows: { type: string }[] = await api.app
      .get(DataSource)
      .query(`SELECT type FROM events WHERE account_id = $1 AND type NOT LIKE 'api_key.%' ORDER BY id`, [accountId]);
    expect(rows.map((r) => r.type)).toEqual([
      'category.created',
      'category.updated',
      'pet.created',
      'inventory.updated',
      'pet.status_changed',
      'pet.updated',
      'pet.deleted',
      'category.deleted',
    ]);
  });
});
