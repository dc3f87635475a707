import { PetstoreClient, PetstoreError } from '@petstore/client';
import type { Event } from '@petstore/client';
import { eventually, HttpClient } from '../../support/http';
import { TcpProxy } from '../../support/tcp-proxy';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

/** Pulls events from the iterator in the background, so a test can act while it waits. */
class Follower {
  readonly events: Event[] = [];
  error: unknown;
  private readonly running: Promise<void>;

  constructor(iterator: AsyncIterable<Event>) {
    this.running = (async () => {
      try {
        for await (const event of iterator) this.events.push(event);
      } catch (err) {
        this.error = err;
      }
    })();
  }

  async waitFor(count: number, timeoutMs = 5_000): Promise<Event[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (this.error) throw this.error;
      if (Date.now() > deadline) throw new Error(`${count} events not received; got ${JSON.stringify(this.events)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.events;
  }

  done(): Promise<void> {
    return this.running;
  }
}

describe('SDK: client.events.stream()', () => {
  let api: RunningApi;
  let proxy: TcpProxy;
  let stop = new AbortController();

  beforeAll(async () => {
    api = await startApi();
    proxy = await TcpProxy.inFrontOf(api.url);
  });
  afterEach(async () => {
    stop.abort();
    stop = new AbortController();
    await streamsOpen(0);
  });
  afterAll(async () => {
    await proxy.stop();
    await api.close();
  });

  /** Events committed from then on reach the stream (the gauge counts it once it is subscribed). */
  const streamsOpen = async (n: number) => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      const metrics = await (await fetch(`${api.metricsUrl}/metrics`)).text();
      if (Number(/^petstore_event_streams_open (\d+)/m.exec(metrics)?.[1]) === n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${n} event streams not open`);
  };

  const setUp = async (baseUrl = api.url) => {
    const { apiKey } = await createAccount(api);
    const http = new HttpClient(api.url, apiKey);
    const categoryId = (await http.post('/v1/categories', { name: 'dogs' })).body.id as number;
    const newPet = async (name: string) => (await http.post('/v1/pets', { name, categoryId })).body.id as number;
    return { client: new PetstoreClient({ apiKey, baseUrl }), newPet, http };
  };

  it('yields the events of the types asked for as they happen', async () => {
    const { client, newPet, http } = await setUp();
    const follower = new Follower(client.events.stream({ types: ['pet.created'], signal: stop.signal }));
    await streamsOpen(1);
    await http.post('/v1/categories', { name: 'cats' });
    const id = await newPet('Rex');
    const [event] = await follower.waitFor(1);
    expect(event).toEqual(expect.objectContaining({ type: 'pet.created', resourceId: String(id) }));
    expect(follower.events).toHaveLength(1);
  });

  it('reconnects by itself after the connection drops, with the last id: the events missed, once each', async () => {
    const { client, newPet } = await setUp(proxy.url);
    const follower = new Follower(client.events.stream({ types: ['pet.created'], signal: stop.signal }));
    await streamsOpen(1);
    const before = await newPet('before');
    await follower.waitFor(1);
    await proxy.stop();
    const missed = [await newPet('m1'), await newPet('m2'), await newPet('m3')];
    await proxy.restart();
    await follower.waitFor(4, 10_000);
    const live = await newPet('live');
    const events = await follower.waitFor(5);
    expect(events.map((e) => Number(e.resourceId))).toEqual([before, ...missed, live]);
  });

  it('calls onOpen each time the server accepts a connection, before its events: what is committed after it comes', async () => {
    const { client, newPet } = await setUp(proxy.url);
    let opened = 0;
    const follower = new Follower(
      client.events.stream({ types: ['pet.created'], signal: stop.signal, onOpen: () => void opened++ }),
    );
    await eventually(async () => opened === 1, 10_000, 10);
    // No waiting for the gauge: the answer's 200 is the promise.
    const first = await newPet('first');
    expect((await follower.waitFor(1))[0].resourceId).toBe(String(first));
    await proxy.stop();
    await proxy.restart();
    await eventually(async () => opened === 2, 15_000, 10);
    const second = await newPet('second');
    expect((await follower.waitFor(2))[1].resourceId).toBe(String(second));
    expect(opened).toBe(2);
  });

  it('resumes after `after`, and ends when the loop breaks', async () => {
    const { client, newPet } = await setUp();
    const first = await newPet('one');
    const second = await newPet('two');
    const events = await client.events.list({ type: 'pet.created' }).next();
    const seen: number[] = [];
    for await (const event of client.events.stream({ types: ['pet.created'], after: (events.value as Event).id })) {
      seen.push(Number(event.resourceId));
      break;
    }
    expect(seen).toEqual([second]);
    expect(first).toBeLessThan(second);
  });

  it('throws the Error of a refused stream (403 for api_key.* to a key without admin)', async () => {
    const { http } = await setUp();
    const readOnly = (await http.post('/v1/keys', { name: 'ro', scopes: ['read'] })).body.secret as string;
    const client = new PetstoreClient({ apiKey: readOnly, baseUrl: api.url });
    const follower = new Follower(client.events.stream({ types: ['api_key.created'] }));
    await follower.done();
    expect(follower.error).toBeInstanceOf(PetstoreError);
    expect((follower.error as PetstoreError).code).toBe('insufficient_scope');
  });

  it('throws the error frame of a stream whose key was revoked, instead of resuming or yielding it', async () => {
    const { http } = await setUp();
    const key = (await http.post('/v1/keys', { name: 'revoked soon', scopes: ['read'] })).body;
    const client = new PetstoreClient({ apiKey: key.secret, baseUrl: api.url });
    const follower = new Follower(client.events.stream({ signal: stop.signal }));
    await streamsOpen(1);
    expect((await http.delete(`/v1/keys/${key.id}`)).status).toBe(204);
    await follower.done();
    expect(follower.error).toBeInstanceOf(PetstoreError);
    expect(follower.error).toEqual(expect.objectContaining({ code: 'invalid_api_key', status: 401 }));
    expect(follower.events).toEqual([]);
  });
});
