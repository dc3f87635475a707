import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { EventQueue, FanOutPendingEventsJob } from '@app/events';
import type { PublicEvent } from '@app/events';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';
import { HttpClient, HttpResponse } from '../../support/http';

/** Follows Link rel="next" until the last page; returns every page. */
async function allPages(http: HttpClient, first: string): Promise<PublicEvent[][]> {
  const pages: PublicEvent[][] = [];
  let next: string | undefined = first;
  while (next) {
    const res: HttpResponse<PublicEvent[]> = await http.get<PublicEvent[]>(next);
    expect(res.status).toBe(200);
    pages.push(res.body);
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return pages;
}

describe('GET /v1/events', () => {
  let api: RunningApi;
  let a: HttpClient;
  let b: HttpClient;

  beforeAll(async () => {
    api = await startApi();
    a = new HttpClient(api.url, (await createAccount(api)).apiKey);
    b = new HttpClient(api.url, (await createAccount(api)).apiKey);
    // Account A: its first key (1 event) + 4 created keys, one revoked, one rotated.
    const keys: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await a.post('/v1/keys', { name: `k${i}` });
      expect(res.status).toBe(201);
      keys.push(res.body.id);
    }
    expect((await a.delete(`/v1/keys/${keys[0]}`)).status).toBe(204);
    expect((await a.post(`/v1/keys/${keys[1]}/rotate`, {})).status).toBe(201);
  });
  afterAll(() => api.close());

  it('with order=newest lists the latest first, and its pages go on towards older events', async () => {
    const oldestFirst = (await a.get<PublicEvent[]>('/v1/events')).body.map((e) => e.id);
    const pages = await allPages(a, '/v1/events?order=newest&limit=3');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(pages.flat().map((e) => e.id)).toEqual([...oldestFirst].reverse());
  });

  it('lists the account’s events oldest first in the public shape', async () => {
    const res = await a.get<PublicEvent[]>('/v1/events');
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    // 1 (first key) + 4 created + 1 revoked + 1 rotated + 1 created by the rotation
    expect(res.body).toHaveLength(8);
    const ids = res.body.map((e) => e.id);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(Object.keys(res.body[0]).sort()).toEqual(
      ['createdAt', 'data', 'id', 'resourceId', 'resourceType', 'sequence', 'type'].sort(),
    );
    const revoked = res.body.find((e) => e.type === 'api_key.revoked')!;
    expect(revoked).toEqual(
      expect.objectContaining({ resourceType: 'api_key', sequence: 2, data: expect.objectContaining({ name: 'k0' }) }),
    );
    expect(new Date(revoked.createdAt).toISOString()).toBe(revoked.createdAt);
    // Snapshots never carry a secret or hash.
    expect(JSON.stringify(res.body)).not.toMatch(/pst_[A-Za-z0-9]{20,}|keyHash|secret/);
  });

  it('queues no fan-out job for an event no webhook subscribes to, and still lists it', async () => {
    const [event] = (await b.get<PublicEvent[]>('/v1/events')).body;
    expect(event).toEqual(expect.objectContaining({ type: 'api_key.created' }));
    const [row] = await api.app.get(DataSource).query('SELECT fanned_out FROM events WHERE id = $1', [event.id]);
    expect(row.fanned_out).toBe(true);
    const events = api.app.get<Queue>(getQueueToken(EventQueue.name), { strict: false });
    expect(await events.getJob(FanOutPendingEventsJob.jobId({ accountId: 0, eventId: event.id }))).toBeUndefined();
  });

  it('numbers each resource’s events 1, 2, 3...', async () => {
    const res = await a.get<PublicEvent[]>('/v1/events?limit=100');
    const byResource = new Map<string, number[]>();
    for (const e of res.body) byResource.set(e.resourceId, [...(byResource.get(e.resourceId) ?? []), e.sequence]);
    for (const seqs of byResource.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect([...byResource.values()].some((s) => s.length === 2)).toBe(true);
  });

  it('pages with limit and after, announcing the next page in Link', async () => {
    const whole = (await a.get<PublicEvent[]>('/v1/events?limit=100')).body;
    const pages = await allPages(a, '/v1/events?limit=3');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(pages.flat().map((e) => e.id)).toEqual(whole.map((e) => e.id));
    const first = await a.get('/v1/events?limit=3');
    expect(first.headers.get('link')).toBe(`</v1/events?limit=3&after=${whole[2].id}>; rel="next"`);
    const after = await a.get<PublicEvent[]>(`/v1/events?after=${whole[5].id}`);
    expect(after.body.map((e) => e.id)).toEqual(whole.slice(6).map((e) => e.id));
  });

  it('filters by type, keeping the filter in the next link', async () => {
    const created = await allPages(a, '/v1/events?type=api_key.created&limit=2');
    expect(created.flat()).toHaveLength(6);
    expect(created.flat().every((e) => e.type === 'api_key.created')).toBe(true);
    const res = await a.get('/v1/events?type=api_key.created&limit=2');
    expect(res.headers.get('link')).toMatch(/type=api_key.created/);
    const revoked = await a.get<PublicEvent[]>('/v1/events?type=api_key.revoked');
    expect(revoked.body.map((e) => e.type)).toEqual(['api_key.revoked']);
  });

  it('refuses unknown types and out-of-range paging with 400 invalid_parameter', async () => {
    for (const q of ['type=pet.exploded', 'limit=0', 'limit=101', 'limit=abc', 'after=-1', 'after=x', 'colour=red']) {
      const res = await a.get(`/v1/events?${q}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(expect.objectContaining({ code: 'invalid_parameter', status: 400 }));
    }
  });

  it('never shows another account’s events', async () => {
    const mine = (await a.get<PublicEvent[]>('/v1/events?limit=100')).body.map((e) => e.id);
    const theirs = (await b.get<PublicEvent[]>('/v1/events?limit=100')).body;
    expect(theirs).toHaveLength(1); // B's own first key
    expect(theirs.some((e) => mine.includes(e.id))).toBe(false);
    // Even when asked for ids after the other account's (`after` is at least 1: on a fresh database
    // A's first event may be id 1, and then no `after` is needed to reach it).
    const after = await b.get<PublicEvent[]>(mine[0] > 1 ? `/v1/events?after=${mine[0] - 1}` : '/v1/events');
    expect(after.status).toBe(200);
    expect(after.body.some((e) => mine.includes(e.id))).toBe(false);
  });

  it('lists api_key.* events only to a key with the admin scope', async () => {
    const owner = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const plain = await owner.post('/v1/keys', { name: 'no admin', scopes: ['read', 'write'] });
    expect(plain.status).toBe(201);
    expect((await owner.post('/v1/categories', { name: 'admin events' })).status).toBe(201);
    const noAdmin = owner.withKey(plain.body.secret);

    const types = async (http: HttpClient, query = '') =>
      (await http.get<PublicEvent[]>(`/v1/events${query}`)).body.map((e) => e.type);
    expect(await types(owner)).toEqual(['api_key.created', 'api_key.created', 'category.created']);
    expect(await types(noAdmin)).toEqual(['category.created']);
    expect(await types(noAdmin, '?order=newest')).toEqual(['category.created']);
    const asked = await noAdmin.get('/v1/events?type=api_key.created');
    expect(asked.status).toBe(403);
    expect(asked.body).toEqual(expect.objectContaining({ code: 'insufficient_scope' }));
    expect(await types(owner, '?type=api_key.created')).toEqual(['api_key.created', 'api_key.created']);
  });

  it('is marked beta in the OpenAPI document', async () => {
    const doc = (await a.get('/openapi.json')).body;
    const op = doc.paths['/events'].get;
    expect(op['x-stability']).toBe('beta');
    expect(op.tags).toEqual(['Events']);
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['after', 'limit', 'order', 'type']);
  });
});
