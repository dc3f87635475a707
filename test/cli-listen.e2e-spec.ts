import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { HttpClient } from './support/http';
import { createAccount, RunningApi, startApi } from './support/test-apps';
import { WebhookReceiver } from '@app/testing';

/** `npx petstore listen ...` through package.json's bin, its stdout lines collected as they come. */
class Listener {
  readonly lines: string[] = [];
  readonly child: ChildProcess;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ['bin/petstore.mjs', 'listen', ...args], {
      env: { ...process.env, LOG_FILE: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.lines.push(line));
  }

  async line(n: number, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length < n) {
      if (Date.now() > deadline) throw new Error(`line ${n} not printed; got ${JSON.stringify(this.lines)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.lines[n - 1];
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill('SIGINT');
    const [code] = await once(this.child, 'exit');
    return code as number | null;
  }
}

describe('npx petstore listen', () => {
  let api: RunningApi;
  let receiver: WebhookReceiver;
  const listeners: Listener[] = [];

  beforeAll(async () => {
    api = await startApi();
    // The second request is refused: the line says so.
    receiver = await new WebhookReceiver((n) => (n === 2 ? 500 : 200)).start();
  });
  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.stop()));
    await receiver.close();
    await api.close();
  });

  /** Events committed from then on reach the listener. */
  const streamsOpen = async (n: number) => {
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      const metrics = await (await fetch(`${api.metricsUrl}/metrics`)).text();
      if (Number(/^petstore_event_streams_open (\d+)/m.exec(metrics)?.[1]) === n) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${n} event streams not open`);
  };

  const setUp = async (json: boolean) => {
    const { apiKey } = await createAccount(api);
    const http = new HttpClient(api.url, apiKey);
    const categoryId = (await http.post('/v1/categories', { name: 'dogs' })).body.id as number;
    await streamsOpen(0);
    const args = ['--api-key', apiKey, '--base-url', api.url, '--forward-to', receiver.url, '--events', 'pet.created'];
    const listener = new Listener(json ? [...args, '--json'] : args);
    listeners.push(listener);
    const newPet = async (name: string) => (await http.post('/v1/pets', { name, categoryId })).body.id as number;
    return { listener, newPet };
  };

  it('forwards each event as a delivery standardwebhooks verifies with the printed secret; --json prints one object a line', async () => {
    const { listener, newPet } = await setUp(true);
    const { secret } = JSON.parse(await listener.line(1)) as { secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await streamsOpen(1);
    const before = receiver.requests.length;
    const petId = await newPet('Rex');
    const printed = JSON.parse(await listener.line(2));
    const delivery = receiver.requests[before];
    const payload = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as {
      type: string;
      resourceId: string;
      id: number;
    };
    expect(payload).toEqual(expect.objectContaining({ type: 'pet.created', resourceId: String(petId) }));
    expect(delivery.headers['webhook-id']).toBe(String(payload.id));
    expect(printed).toEqual({ id: payload.id, type: 'pet.created', status: 200, error: null });
    expect(await listener.stop()).toBe(0);
  });

  it("prints the secret first, then a line per event with the receiver's status", async () => {
    const { listener, newPet } = await setUp(false);
    expect(await listener.line(1)).toMatch(/whsec_[A-Za-z0-9+/]+=*/);
    await streamsOpen(1);
    await newPet('first');
    await newPet('second');
    const lines = [await listener.line(2), await listener.line(3)];
    for (const line of lines) expect(line).toMatch(/ {2}pet\.created {2}\d+ {2}-> (200|500)$/);
    expect(lines.join('\n')).toMatch(/-> 500/);
    expect(await listener.stop()).toBe(0);
  });
});
