import type { PublicEvent } from '@app/events';
import { HttpClient } from '../../support/http';
import { SseClient } from '../../support/sse-client';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';

describe('GET /v1/events/stream', () => {
  let a: RunningApi;
  let b: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  const open: SseClient[] = [];

  const stream = async (api: RunningApi, key: string, query = '', headers: Record<string, string> = {}) => {
    const client = await SseClient.open(api.url, key, query, headers);
    open.push(client);
    return client;
  };

  /** A business account with an admin key, and a category to put pets in. */
  const account = async () => {
    const { apiKey, accountId } = await createAccount(a);
    const http = new HttpClient(a.url, apiKey);
    const category = (await http.post('/v1/categories', { name: `c${Date.now()}` })).body.id as number;
    return { apiKey, accountId, http, newPet: (name: string) => http.post('/v1/pets', { name, categoryId: category }) };
  };

  beforeAll(async () => {
    // Two replicas of the API on the same stores; a short heartbeat, to see one.
    a = await startApi({ EVENT_STREAM_HEARTBEAT_MS: '300' });
    b = await startApi({ EVENT_STREAM_HEARTBEAT_MS: '300' });
    worker = await startWorker();
  });
  afterEach(() => Promise.all(open.splice(0).map((c) => c.close())));
  afterAll(() => closeAll([() => a.close(), () => b.close(), () => worker.close()]));

  it('delivers pet.created to a stream opened before the POST within 1 s, framed as id, event and data', async () => {
    const { apiKey, newPet } = await account();
    const client = await stream(a, apiKey);
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const started = Date.now();
    const pet = (await newPet('Rex')).body;
    const [event] = await client.waitForEvents(1, 1_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(event).toEqual(expect.objectContaining({ type: 'pet.created', resourceId: String(pet.id) }));
    const frame = client.frames.find((f) => f.data)!;
    expect(frame).toEqual(expect.objectContaining({ id: String(event.id), event: 'pet.created' }));
  });

  it('sends each event with the same JSON as GET /v1/events lists it', async () => {
    const { apiKey, http, newPet } = await account();
    const client = await stream(a, apiKey, '?type=pet.created');
    await newPet('Same');
    const [event] = await client.waitForEvents(1);
    const listed = (await http.get<PublicEvent[]>(`/v1/events?type=pet.created`)).body;
    expect(client.frames.find((f) => f.data)!.data).toBe(JSON.stringify(listed.at(-1)));
    expect(event.id).toBe(listed.at(-1)!.id);
  });

  it('after a disconnect, resumes with Last-Event-ID: exactly the 3 events missed, then live ones', async () => {
    const { apiKey, newPet } = await account();
    const first = await stream(a, apiKey, '?type=pet.created');
    await newPet('before');
    const [seen] = await first.waitForEvents(1);
    await first.close();
    const missed = [];
    for (const name of ['m1', 'm2', 'm3']) missed.push((await newPet(name)).body.id);

    const again = await stream(a, apiKey, '?type=pet.created', { 'Last-Event-ID': String(seen.id) });
    const caughtUp = await again.waitForEvents(3);
    expect(caughtUp.map((e) => Number(e.resourceId))).toEqual(missed);
    const live = (await newPet('live')).body.id;
    const events = await again.waitForEvents(4);
    expect(events.map((e) => Number(e.resourceId))).toEqual([...missed, live]);
    // Nothing more arrives (no duplicate of the seam).
    await new Promise((r) => setTimeout(r, 300));
    expect(again.events).toHaveLength(4);
  });

  it('without Last-Event-ID, first sends the newest id as a position, so a reconnect before any event misses none', async () => {
    const { apiKey, newPet } = await account();
    const first = await stream(a, apiKey, '?type=pet.created');
    await first.waitFor(() => first.frames.some((f) => f.id), 2_000, 'a position');
    const [position] = first.frames.filter((f) => f.id);
    expect(position.data).toBeUndefined();
    await first.close();
    const missed = (await newPet('gap')).body.id;
    const again = await stream(a, apiKey, '?type=pet.created', { 'Last-Event-ID': position.id! });
    const [event] = await again.waitForEvents(1);
    expect(Number(event.resourceId)).toBe(missed);
  });

  it('resumes with ?after= too, and Last-Event-ID wins over it', async () => {
    const { apiKey, newPet } = await account();
    const ids = [];
    for (const name of ['x1', 'x2', 'x3']) ids.push((await newPet(name)).body.id);
    const probe = await stream(a, apiKey, '?type=pet.created&after=1');
    const all = await probe.waitForEvents(3);
    expect(all.map((e) => Number(e.resourceId))).toEqual(ids);
    const resumed = await stream(a, apiKey, `?type=pet.created&after=${all[0].id}`, {
      'Last-Event-ID': String(all[1].id),
    });
    await resumed.waitForEvents(1);
    // Nothing more arrives: a live stream's silence has no later event to wait for.
    await new Promise((r) => setTimeout(r, 200));
    expect(resumed.events.map((e) => e.id)).toEqual([all[2].id]);
  });

  it('a stream on replica B receives an event made through replica A', async () => {
    const { apiKey, newPet } = await account();
    const onB = await stream(b, apiKey, '?type=pet.created');
    const pet = (await newPet('across')).body;
    const [event] = await onB.waitForEvents(1, 2_000);
    expect(event.resourceId).toBe(String(pet.id));
  });

  it('receives an event the worker commits (message.processed)', async () => {
    const { apiKey, http } = await account();
    const client = await stream(b, apiKey, '?type=message.processed');
    const message = (await http.post('/v1/messages', { message: 'hello' })).body;
    const [event] = await client.waitForEvents(1, 10_000);
    expect(event.resourceId).toBe(message.id);
  });

  it("a read/write key's stream carries no api_key.* event; an admin key's does", async () => {
    const { apiKey, http, newPet } = await account();
    const readWrite = (await http.post('/v1/keys', { name: 'rw', scopes: ['read', 'write'] })).body.secret as string;
    const admin = await stream(a, apiKey);
    const plain = await stream(a, readWrite);
    await http.post('/v1/keys', { name: 'another' });
    await newPet('marker');
    await admin.waitForEvents(2);
    await plain.waitForEvents(1);
    expect(admin.events.map((e) => e.type)).toEqual(['api_key.created', 'pet.created']);
    expect(plain.events.map((e) => e.type)).toEqual(['pet.created']);
  });

  it('refuses api_key.* types to a key without admin (403), as GET /v1/events does', async () => {
    const { http } = await account();
    const readOnly = (await http.post('/v1/keys', { name: 'ro', scopes: ['read'] })).body.secret as string;
    const refused = await stream(a, readOnly, '?type=pet.created,api_key.created');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(expect.objectContaining({ code: 'insufficient_scope' }));
  });

  it('answers 400 to a malformed Last-Event-ID or an unknown type', async () => {
    const { apiKey } = await account();
    const badId = await stream(a, apiKey, '', { 'Last-Event-ID': 'abc' });
    expect([badId.status, (badId.body as { code: string }).code]).toEqual([400, 'invalid_parameter']);
    const badType = await stream(a, apiKey, '?type=pet.created,pet.eaten');
    expect([badType.status, (badType.body as { code: string }).code]).toEqual([400, 'invalid_parameter']);
  });

  it("beyond the plan's concurrent streams per key, across replicas, answers 429 with the Error body", async () => {
    const { apiKey } = await createAccount(a, 'free');
    const first = await stream(a, apiKey);
    const second = await stream(b, apiKey);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await stream(a, apiKey);
    expect(third.status).toBe(429);
    expect(third.body).toEqual(
      expect.objectContaining({
        code: 'rate_limit_exceeded',
        status: 429,
        details: [expect.objectContaining({ field: 'streams' })],
      }),
    );
    expect(third.headers.get('retry-after')).toBeTruthy();
    // A closed stream gives its slot back.
    await first.close();
    const fourth = await eventuallyOpen(() => stream(b, apiKey));
    expect(fourth.status).toBe(200);
  });

  it('sends a heartbeat comment on an idle stream', async () => {
    const { apiKey } = await account();
    const client = await stream(a, apiKey);
    await client.waitFor(() => client.frames.some((f) => f.comment === 'heartbeat'), 2_000, 'a heartbeat');
  });

  it('ends its streams with a retry hint when the API shuts down', async () => {
    const { apiKey } = await account();
    const c = await startApi();
    try {
      const client = await stream(c, apiKey);
      await c.app.close();
      await client.waitFor(() => client.ended, 2_000, 'the end of the stream');
      expect(client.frames.at(-1)).toEqual(expect.objectContaining({ comment: 'shutdown', retry: 500 }));
    } finally {
      await c.close().catch(() => undefined);
    }
  });
});

/** The slot is given back asynchronously after the close. */
async function eventuallyOpen(open: () => Promise<SseClient>): Promise<SseClient> {
  for (let i = 0; ; i++) {
    const client = await open();
    if (client.status === 200 || i === 20) return client;
    await new Promise((r) => setTimeout(r, 50));
  }
}
