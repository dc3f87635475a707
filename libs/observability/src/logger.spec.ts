import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs, { fstatSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import pino from 'pino';
import { AppConfig } from '@app/config';
import { accessLog, LOG_BATCH_CHARS, LOG_FLUSH_MS, PinoNestLogger, rootLogger } from './logger';

/** A pino logger writing JSON lines into an array. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'trace', base: undefined }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

describe('PinoNestLogger', () => {
  afterEach(() => Logger.overrideLogger(false));

  it("keeps Nest's context, merges object messages, and drops stack traces", () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(new PinoNestLogger(logger));
    const nest = new Logger('Orders');

    nest.warn({ orderId: 7 }, 'fulfilment job not removed');
    nest.log('plain text');
    nest.error('failed', 'Error: boom\n    at secret.ts:1:1');
    nest.error(new Error('thrown'));
    Logger.log('no context');

    const picked = lines.map(({ level, context, msg, orderId }) => ({ level, context, msg, orderId }));
    expect(picked).toEqual([
      { level: 40, context: 'Orders', msg: 'fulfilment job not removed', orderId: 7 },
      { level: 30, context: 'Orders', msg: 'plain text', orderId: undefined },
      { level: 50, context: 'Orders', msg: 'failed', orderId: undefined },
      { level: 50, context: 'Orders', msg: 'thrown', orderId: undefined },
      { level: 30, context: undefined, msg: 'no context', orderId: undefined },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/secret\.ts|logger\.spec/);
  });

  it("writes Nest's line per mapped route and per loaded module at debug, other start-up lines at info", () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(new PinoNestLogger(logger));
    new Logger('RoutesResolver').log('PetsController {/v1/pets}:');
    new Logger('RouterExplorer').log('Mapped {/v1/pets, GET} route');
    new Logger('InstanceLoader').log('ConfigModule dependencies initialized');
    new Logger('NestApplication').log('Nest application successfully started');

    expect(lines.map(({ level, context }) => [context, level])).toEqual([
      ['RoutesResolver', 20],
      ['RouterExplorer', 20],
      ['InstanceLoader', 20],
      ['NestApplication', 30],
    ]);
  });
});

/** A request and its response as the access log sees them. */
function exchange(url: string, headers: Record<string, string>, status: number, finished: boolean) {
  const req = Object.assign(new EventEmitter(), { url, method: 'GET', headers }) as unknown as IncomingMessage;
  const sent: Record<string, unknown> = {};
  const res = Object.assign(new EventEmitter(), {
    statusCode: status,
    writableFinished: finished,
    setHeader: (name: string, value: unknown) => (sent[name] = value),
    hasHeader: (name: string) => Object.keys(sent).some((k) => k.toLowerCase() === name.toLowerCase()),
  }) as unknown as ServerResponse;
  return { req, res, sent };
}

describe('accessLog', () => {
  function run(url: string, headers: Record<string, string>, status = 200, finished = true) {
    const { logger, lines } = capture();
    const { req, res } = exchange(url, headers, status, finished);
    const id = accessLog(logger)(req, res, undefined);
    res.emit('close');
    return { lines, id };
  }

  it('logs one line per request with its id, and neither the query string nor a key in the path', () => {
    const { lines, id } = run('/v1/keys/pst_abcdef0123456789?token=hidden', { 'x-request-id': 'r-1' });
    expect(id).toBe('r-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r-1', method: 'GET', path: '/v1/keys/pst_[redacted]', status: 200 });
    expect(JSON.stringify(lines)).not.toContain('hidden');
  });

  it('logs 5xx answers as errors and marks requests the client abandoned', () => {
    const failed = run('/v1/pets', {}, 500).lines;
    expect(failed[0]).toMatchObject({ level: 50, status: 500 });
    const aborted = run('/v1/pets', {}, 200, false).lines;
    expect(aborted[0]).toMatchObject({ level: 30, aborted: true });
  });

  it('logs a 503 that says when to retry as info: shed load, not a failure', () => {
    const { logger, lines } = capture();
    const { req, res } = exchange('/v1/pets', {}, 503, true);
    accessLog(logger)(req, res, undefined);
    res.setHeader('Retry-After', '1');
    res.emit('close');
    expect(lines[0]).toMatchObject({ level: 30, status: 503 });
  });

  it('gives probes a request id but no log line', () => {
    const { lines, id } = run('/health/ready', {});
    expect(lines).toEqual([]);
    expect(id).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  });
});

describe('rootLogger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-logger-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // The flush interval on a fake clock: what these check does not depend on how busy the machine is.
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'Date'] }));
  afterEach(() => jest.useRealTimers());

  const fileLogger = (app: string, logFormat: AppConfig['logFormat'] = 'json') => {
    const logFile = join(dir, `${app}.log`);
    return { logger: rootLogger({ logLevel: 'info', logFormat, logFile } as AppConfig, app), logFile };
  };
  const linesIn = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

  /** fs.write calls to `logFile` from now on (loggers of other files in this Jest worker write too). */
  function writesTo(logFile: string) {
    const write = jest.spyOn(fs, 'write');
    const file = statSync(logFile).ino;
    return {
      count: () => write.mock.calls.filter(([fd]) => typeof fd === 'number' && inode(fd) === file).length,
      restore: () => write.mockRestore(),
    };
  }

  it('holds lines short of a batch until the flush interval, then writes them at once', async () => {
    const { logger, logFile } = fileLogger('batched');
    const { count: writesHere, restore } = writesTo(logFile);
    try {
      for (let i = 0; i < 30; i++) logger.info({ i }, 'request completed');
      expect(writesHere()).toBe(0);
      jest.advanceTimersByTime(LOG_FLUSH_MS);
      await until(() => linesIn(logFile).length === 30);
      expect(writesHere()).toBe(1);
    } finally {
      restore();
    }
  });

  it('holds lines past 4 KB, and writes them in one write once they reach LOG_BATCH_CHARS', async () => {
    const { logger, logFile } = fileLogger('joined');
    const { count: writesHere, restore } = writesTo(logFile);
    try {
      const padding = 'x'.repeat(1_000);
      let logged = 0;
      for (; logged < 8; logged++) logger.info({ padding }, 'request completed');
      expect(writesHere()).toBe(0);
      for (; writesHere() === 0 && logged < 2 * (LOG_BATCH_CHARS / 1_000); logged++) {
        logger.info({ padding }, 'request completed');
      }
      expect(writesHere()).toBe(1);
      await until(() => linesIn(logFile).length === logged);
    } finally {
      restore();
    }
  });

  it('LOG_FORMAT=pretty: one readable line an entry, its fields as key=value, no JSON', async () => {
    const { logger, logFile } = fileLogger('pretty', 'pretty');
    logger.child({ context: 'HttpServer' }).info({ signal: 'SIGTERM', inFlight: 0 }, 'shutting down');
    logger.warn({ reason: 'two words' }, 'odd');
    jest.advanceTimersByTime(LOG_FLUSH_MS);
    await until(() => linesIn(logFile).length === 2);
    const [first, second] = linesIn(logFile);
    expect(first).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}pretty HttpServer: shutting down signal=SIGTERM inFlight=0$/);
    expect(second).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}pretty odd reason="two words"$/);
  });

  // The bytes of an access line are part of the contract (log pipelines parse them): pinned whole, time included.
  it.each([
    [
      'a completed request',
      ['exact', 'json', '/v1/pets/42?limit=5', 200, true],
      '{"level":30,"time":"2026-11-27T08:15:30.054Z","app":"exact","reqId":"r-1","method":"GET",' +
        '"path":"/v1/pets/42","status":200,"ms":12,"msg":"request completed"}',
    ],
    [
      'a failed request the client abandoned, its key redacted',
      ['exact-failed', 'json', '/v1/keys/pst_abcdef0123456789', 500, false],
      '{"level":50,"time":"2026-11-27T08:15:30.054Z","app":"exact-failed","reqId":"r-1","method":"GET",' +
        '"path":"/v1/keys/pst_[redacted]","status":500,"ms":12,"aborted":true,"msg":"request failed"}',
    ],
    [
      'LOG_FORMAT=pretty',
      ['exact-pretty', 'pretty', '/v1/pets/42', 200, true],
      '08:15:30.054 INFO  exact-pretty request completed reqId=r-1 method=GET path=/v1/pets/42 status=200 ms=12',
    ],
  ] as const)(
    'writes the access line byte for byte: %s',
    async (_what, [app, logFormat, url, status, finished], line) => {
      jest.useFakeTimers({ now: Date.parse('2026-11-27T08:15:30.042Z'), doNotFake: ['setImmediate', 'nextTick'] });
      const { logger, logFile } = fileLogger(app, logFormat);
      const { req, res } = exchange(url, { 'x-request-id': 'r-1' }, status, finished);
      accessLog(logger)(req, res, undefined);
      jest.advanceTimersByTime(12);
      res.emit('close');
      jest.advanceTimersByTime(LOG_FLUSH_MS);
      await until(() => linesIn(logFile).length === 1);
      expect(linesIn(logFile)).toEqual([line]);
    },
  );

  it.each([
    ['calls process.exit', 'process.exit(0);'],
    ['runs out of work', ''],
  ])('writes the lines it holds when the process %s', (_how, end) => {
    const logFile = join(dir, `exiting-${end ? 'exit' : 'idle'}.log`);
    const script = `
      const { rootLogger } = require(${JSON.stringify(join(__dirname, 'logger'))});
      const logger = rootLogger({ logLevel: 'info', logFormat: 'json', logFile: ${JSON.stringify(logFile)} }, 'exiting');
      logger.info('first');
      logger.info('last');
      ${end}`;
    execFileSync(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', '-e', script],
      {
        cwd: join(__dirname, '../../..'),
        stdio: 'pipe',
      },
    );
    expect(linesIn(logFile).map((line) => JSON.parse(line).msg)).toEqual(['first', 'last']);
  });

  it('writes a lone line at the next flush', async () => {
    const { logger, logFile } = fileLogger('lone');
    logger.info('the only line');
    jest.advanceTimersByTime(LOG_FLUSH_MS);
    await until(() => linesIn(logFile).length === 1);
  });
});

/** The inode behind a descriptor, or undefined once it is closed. */
function inode(fd: number): number | undefined {
  try {
    return fstatSync(fd).ino;
  } catch {
    return undefined;
  }
}

/** Polls `check` between I/O turns for up to 10 s of wall-clock time. */
async function until(check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check();) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
