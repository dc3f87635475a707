import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { cliEnv, runCliCollecting } from '../../support/cli';
import { eventually, HttpClient } from '../../support/http';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';
import { WebhookReceiver } from '@app/testing';
import { freePort } from '../../support/free-port';

/** listen keeps its secrets in the user's config directory: here, a directory of this file's own. */
const home = mkdtempSync(join(tmpdir(), 'petstore-listen-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const configHome = join(home, 'config');

/** A running `petstore listen ...`, its stdout lines collected as they come. */
abstract class Listener {
  readonly lines: string[] = [];
  /** What it wrote to stderr. */
  readonly errors: string[] = [];
  /** Its exit code, once it exited by itself or was stopped. */
  abstract readonly exited: Promise<number | null>;
  protected readonly env: NodeJS.ProcessEnv;

  constructor(env: NodeJS.ProcessEnv) {
    this.env = { PETSTORE_API_KEY: undefined, HOME: home, XDG_CONFIG_HOME: configHome, ...env };
  }

  async line(n: number, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length < n) {
      if (Date.now() > deadline) throw new Error(`line ${n} not printed; got ${JSON.stringify(this.lines)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.lines[n - 1];
  }

  /** Its exit code, once it exited by itself (within timeoutMs). */
  async exit(timeoutMs = 30_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`still running; stderr: ${this.errors.join('')}`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ctrl-C, then its exit code. */
  abstract stop(): Promise<number | null>;
}

/** In this process (runCli): stopped through its AbortSignal. */
class InProcessListener extends Listener {
  readonly exited: Promise<number>;
  private readonly controller = new AbortController();

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    super(env);
    this.exited = runCliCollecting(this.env, ['listen', ...args], {
      signal: this.controller.signal,
      onStdoutLine: (line) => this.lines.push(line),
      onStderrLine: (line) => this.errors.push(`${line}\n`),
    }).then(({ code }) => code);
  }

  stop(): Promise<number> {
    this.controller.abort();
    return this.exited;
  }
}

/** `npx petstore listen ...` through package.json's bin, a process of its own: stopped with SIGINT. */
class ProcessListener extends Listener {
  readonly exited: Promise<number | null>;
  readonly child: ChildProcess;

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    super(env);
    this.child = spawn(process.execPath, ['bin/petstore.mjs', 'listen', ...args], {
      env: cliEnv(this.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = once(this.child, 'exit').then(([code]) => code as number | null);
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.lines.push(line));
    this.child.stderr!.on('data', (chunk: Buffer) => this.errors.push(chunk.toString()));
  }

  stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGINT');
    return this.exited;
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
    for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
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
    const listener = new InProcessListener(json ? [...args, '--json'] : args);
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

  it('stops with the error and exit code 1 when its key is revoked, instead of reconnecting', async () => {
    const { apiKey } = await createAccount(api);
    const admin = new HttpClient(api.url, apiKey);
    const key = (await admin.post('/v1/keys', { name: 'listening', scopes: ['read'] })).body;
    await streamsOpen(0);
    const listener = new InProcessListener([
      '--api-key',
      key.secret,
      '--base-url',
      api.url,
      '--forward-to',
      receiver.url,
    ]);
    listeners.push(listener);
    await listener.line(1);
    await streamsOpen(1);
    // Listened for first: the stream may end before the DELETE's answer arrives.
    const exited = listener.exited;
    expect((await admin.delete(`/v1/keys/${key.id}`)).status).toBe(204);
    expect(await exited).toBe(1);
    expect(listener.errors.join('')).toMatch(/^error: The API key was revoked/m);
  });

  it('prints Ready! only once the key is checked and the stream open: an event committed right after it is forwarded', async () => {
    const { listener, newPet } = await setUp(true);
    const ready = JSON.parse(await listener.line(1)) as Record<string, unknown>;
    expect(ready).toEqual(
      expect.objectContaining({ ready: true, secret: expect.stringMatching(/^whsec_/), forwardTo: receiver.url }),
    );
    // No waiting for the stream: Ready says it is open.
    const petId = await newPet('right after Ready');
    expect(JSON.parse(await listener.line(2))).toEqual(expect.objectContaining({ type: 'pet.created' }));
    expect(receiver.requests.at(-1)?.body).toContain(`"resourceId":"${petId}"`);
    expect(await listener.stop()).toBe(0);
  });

  it('says Ready! in plain text with the account and the secret; Ctrl-C ends it with 0 (through the bin, a process)', async () => {
    const { accountId, apiKey } = await createAccount(api);
    const listener = new ProcessListener(['--api-key', apiKey, '--base-url', api.url, '--forward-to', receiver.url]);
    listeners.push(listener);
    expect(await listener.line(1)).toMatch(
      new RegExp(
        `^Ready! Forwarding the events of account ${accountId} \\(.*\\) to ${receiver.url}, signed with whsec_\\S+ \\(Ctrl-C to stop\\)$`,
      ),
    );
    expect(await listener.stop()).toBe(0);
  });

  it("a refused key: the API's message on stderr, nothing on stdout, exit code 1", async () => {
    const listener = new InProcessListener([
      '--api-key',
      'pst_not_a_real_key_at_all',
      '--base-url',
      api.url,
      '--forward-to',
      receiver.url,
    ]);
    listeners.push(listener);
    expect(await listener.exit()).toBe(1);
    expect(listener.lines).toEqual([]);
    expect(listener.errors.join('')).toMatch(/^error: .+ \(HTTP 401 [a-z_]+\): check --api-key/m);
  });

  it('an API it cannot reach: each retry said on stderr, then exit code 1', async () => {
    const baseUrl = `http://127.0.0.1:${await freePort()}/`;
    const listener = new InProcessListener([
      '--api-key',
      'pst_whatever',
      '--base-url',
      baseUrl,
      '--forward-to',
      receiver.url,
    ]);
    listeners.push(listener);
    expect(await listener.exit(40_000)).toBe(1);
    expect(listener.lines).toEqual([]);
    const stderr = listener.errors.join('');
    for (const [attempt, delay] of [
      [2, 1],
      [3, 2],
      [4, 4],
      [5, 4],
    ])
      expect(stderr).toContain(
        `cannot reach ${baseUrl}: connection refused; retrying in ${delay} s (attempt ${attempt} of 5)\n`,
      );
    expect(stderr).toMatch(
      new RegExp(`^error: cannot reach ${baseUrl}: connection refused; gave up after 5 attempts$`, 'm'),
    );
  }, 60_000);

  it('signs with one secret per account on this machine, kept 0600 in the config directory; --print-secret prints it', async () => {
    const { apiKey } = await createAccount(api);
    const other = await createAccount(api);
    const run = async (key: string) => {
      const listener = new InProcessListener([
        '--api-key',
        key,
        '--base-url',
        api.url,
        '--forward-to',
        receiver.url,
        '--json',
      ]);
      listeners.push(listener);
      const { secret } = JSON.parse(await listener.line(1)) as { secret: string };
      expect(await listener.stop()).toBe(0);
      return secret;
    };
    const first = await run(apiKey);
    expect(await run(apiKey)).toBe(first);
    expect(await run(other.apiKey)).not.toBe(first);
    const file = join(configHome, 'petstore', 'listen-secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(configHome, 'petstore')).mode & 0o077).toBe(0);

    // No --forward-to needed: it checks the key, prints the secret alone and exits.
    const printing = new InProcessListener(['--api-key', apiKey, '--base-url', api.url, '--print-secret']);
    expect(await printing.exit()).toBe(0);
    expect(printing.lines).toEqual([first]);
    const refused = new InProcessListener([
      '--api-key',
      'pst_not_a_real_key_at_all',
      '--base-url',
      api.url,
      '--print-secret',
    ]);
    expect(await refused.exit()).toBe(1);
    expect(refused.lines).toEqual([]);
  });
});

/**
 * Issue 60: a server `listen` talks to (a fake one, on loopback) made it print terminal escape sequences and a forged
 * output line, and reconnect every ~0.3 s (`retry:` had no floor). Each connection gets `retry: 10`, one event whose
 * fields carry control sequences, and the end of the stream at once.
 */
/** C0, DEL and C1 (as a string, for the lint rule against control characters written by mistake). */
const CONTROL_CLASS = '\\u0000-\\u001f\\u007f-\\u009f';
const CONTROL = new RegExp(`[${CONTROL_CLASS}]`);

class HostileStream {
  readonly connects: { at: number; authorization?: string }[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      if (req.method === 'POST') return void res.writeHead(204).end();
      if (req.url === '/v1/account') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return void res.end(JSON.stringify({ id: 1, name: 'hostile\u001b[2J\nFORGED', plan: 'free' }));
      }
      this.connects.push({ at: Date.now(), authorization: req.headers.authorization });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const event = {
        id: 7,
        type: 'pet.created\u001b]0;owned\u0007\u001b[2J\u009b31m\u007f',
        resourceType: 'pet\r\nFORGED  pet.created  8  -> 200',
        resourceId: '1',
        sequence: 1,
        data: {},
        createdAt: new Date().toISOString(),
      };
      // The id too: listen prints it as a string.
      const data = JSON.stringify(event).replace('"id":7', '"id":"7\\r\\nFORGED\\u001b[1A"');
      res.end(`retry: 10\nid: 7\ndata: ${data}\n\n`);
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('npx petstore listen against a server it does not trust', () => {
  let server: HostileStream;
  const listeners: Listener[] = [];
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const start = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const listener = new InProcessListener(
      ['--base-url', server.url, '--forward-to', `${server.url}/hook`, ...args],
      env,
    );
    listeners.push(listener);
    return listener;
  };

  beforeAll(async () => {
    server = await new HostileStream().start();
  });
  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.stop()));
    await server.close();
  });

  it('prints no control character and no forged line, and reconnects no faster than once a second, backing off', async () => {
    const listener = start(['--api-key', 'pst_from_the_flag']);
    await listener.line(2);
    const from = server.connects.length - 1;
    await sleep(4_500);
    expect(await listener.stop()).toBe(0);

    const lines = listener.lines;
    for (const line of lines) expect(line).not.toMatch(CONTROL);
    expect(lines.filter((l) => l.startsWith('FORGED'))).toEqual([]);
    // The secret, then one line an event, each in its four fields.
    for (const line of lines.slice(1)) expect(line).toMatch(/^\S+ {2}pet\.created {2}7FORGED {2}-> (204|failed: .*)$/);

    // `retry: 10` asked for 10 ms: at least 1 s apart, then longer while each connection ends at once.
    const at = server.connects.slice(from).map((c) => c.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    expect(gaps.length).toBeGreaterThanOrEqual(1);
    expect(gaps.length).toBeLessThanOrEqual(4);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
    if (gaps.length > 1) expect(gaps[1]).toBeGreaterThanOrEqual(1_900);
  });

  it('takes the key from PETSTORE_API_KEY; --api-key wins over it', async () => {
    const before = server.connects.length;
    const fromEnv = start([], { PETSTORE_API_KEY: 'pst_from_the_environment' });
    await fromEnv.line(1);
    await eventually(async () => server.connects.length > before);
    expect(await fromEnv.stop()).toBe(0);
    expect(server.connects[before].authorization).toBe('Bearer pst_from_the_environment');

    const next = server.connects.length;
    const both = start(['--api-key', 'pst_from_the_flag'], { PETSTORE_API_KEY: 'pst_from_the_environment' });
    await both.line(1);
    await eventually(async () => server.connects.length > next);
    expect(await both.stop()).toBe(0);
    expect(server.connects[next].authorization).toBe('Bearer pst_from_the_flag');
  });
});
