import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as sdk from '@petstore/client';
import { cliWithEnv } from '../../support/cli';
import { describeWith } from '../../support/external-binary';
import { DocExample, docExamples, transpileDocCode } from '../../support/doc-code';
import { RunningApi, startApi } from '../../support/test-apps';

const root = join(__dirname, '..', '..', '..');
const exec = promisify(execFile);

/** The README and the guides written for API users, in the order a newcomer reads them (one account for all). */
const DOCS = [
  'README.md',
  'docs/using-the-api.md',
  'docs/keys-and-limits.md',
  'docs/catalog-and-store.md',
  'docs/messages-and-idempotency.md',
  'docs/events-and-webhooks.md',
  'docs/receiving-webhooks.md',
];

/**
 * The examples marked `<!-- not-run: reason -->`, per document: a new mark must be added here too, so none
 * slips in unseen. Each says why in the document.
 */
const NOT_RUN: Record<string, number> = {
  'README.md': 1, // npm ci && npm start: starts the service the others talk to
  'docs/using-the-api.md': 1, // the operator CLI: needs the service's database (test/e2e/cli/cli.e2e-spec.ts)
  'docs/keys-and-limits.md': 0,
  'docs/catalog-and-store.md': 0,
  'docs/messages-and-idempotency.md': 1, // a controller of the service, not a call to it
  'docs/events-and-webhooks.md': 2, // petstore listen (runs until stopped) and petstore trigger: synopses with placeholders
  'docs/receiving-webhooks.md': 1, // a receiver (test/receiving-webhooks-guide.spec.ts runs it)
};

/** What a shell example may run: curl, alone or captured into a variable (so nothing else of the machine is touched). */
const CURL_COMMAND = /^\s*(?:[A-Za-z_]\w*=\$\()?curl\s/;
/** Where the examples say the API is: `npm start`'s address. */
const DOCUMENTED_HOSTS = ['localhost:3000', '127.0.0.1:3000'];

interface Answer {
  step: string;
  method: string;
  path: string;
  readonly status: number;
  readonly deprecated: boolean;
  readonly body: string;
}

interface Step {
  doc: string;
  line: number;
  heading: string;
  text: string;
}

const AsyncFunction = (async () => undefined).constructor as new (
  ...params: string[]
) => (...args: unknown[]) => Promise<unknown>;

/**
 * Every runnable example (curl commands, TypeScript SDK blocks) of the README and the API guides, run as written
 * against a live API whose only account is the one `npm start` seeds (`seed:demo`), its key as `$KEY`,
 * `localhost:3000` reaching the API under test (curl's --connect-to; the SDK's fetch). No worker runs: no example
 * waits for one, and a webhook's deliveries would leave the machine. Fails naming the document, the line and the
 * answer of every example that does not succeed (a non-zero exit, a thrown error, an answer of 400 or more) or
 * that calls a deprecated operation outside a section about deprecation. Examples marked
 * `<!-- not-run: reason -->` are counted, not run.
 */
// The curl examples keep ids with jq.
describeWith('jq', 'apt-get install -y jq')(
  'the examples of the README and the API guides run against a fresh npm start demo account',
  () => {
    let api: RunningApi;
    let apiKey: string;
    let home: string;
    const answers: Answer[] = [];
    const steps = new Map<string, Step>();
    const realFetch = globalThis.fetch;

    /**
     * Records every answer to an example's request (marked by the X-Doc-Example header) as it is made: its status,
     * Deprecation header and body's start are read when the examples are judged, so a stream still open counts too.
     */
    const recording =
      (app: RequestListener): RequestListener =>
      (req, res) => {
        const step = req.headers['x-doc-example'];
        if (typeof step === 'string') {
          const chunks: Buffer[] = [];
          let kept = 0;
          const keep = (chunk: unknown) => {
            if ((typeof chunk === 'string' || chunk instanceof Uint8Array) && kept < 2000) {
              chunks.push(Buffer.from(chunk));
              kept += chunks[chunks.length - 1].length;
            }
          };
          const { write, end } = res;
          res.write = function (this: typeof res, chunk: unknown, ...rest: unknown[]) {
            keep(chunk);
            return write.apply(this, [chunk, ...rest] as never);
          } as typeof res.write;
          res.end = function (this: typeof res, chunk?: unknown, ...rest: unknown[]) {
            keep(chunk);
            return end.apply(this, [chunk, ...rest] as never);
          } as typeof res.end;
          answers.push({
            step,
            method: req.method ?? '',
            path: req.url ?? '',
            get status() {
              return res.statusCode;
            },
            get deprecated() {
              return res.hasHeader('deprecation');
            },
            get body() {
              return Buffer.concat(chunks).toString('utf8').slice(0, 500);
            },
          });
        }
        app(req, res);
      };

    beforeAll(async () => {
      api = await startApi({}, { wrap: recording });
      // As `npm start` does on an empty database: `seed:demo`, with the built CLI.
      const { stdout } = await cliWithEnv({ DEMO_SEED: 'true' }, 'seed:demo', '--json');
      ({ apiKey } = JSON.parse(stdout) as { apiKey: string });
      home = mkdtempSync(join(tmpdir(), 'doc-examples-'));
    }, 120_000);
    afterAll(async () => {
      globalThis.fetch = realFetch;
      rmSync(home, { recursive: true, force: true });
      await api?.close();
    });

    const apiPort = () => new URL(api.url).port;
    let nextStep = 0;
    const stepFor = (doc: string, example: DocExample, line: number, text: string) => {
      const id = String(++nextStep);
      steps.set(id, { doc, line, heading: example.heading, text });
      return id;
    };

    /** Runs a document's shell examples in one bash, in order (a variable set by one is there for the next). */
    async function runShell(
      doc: string,
      examples: DocExample[],
    ): Promise<Map<string, { exit?: number; output: string }>> {
      const lines = [
        'set -o pipefail',
        `curl() { command curl ${DOCUMENTED_HOSTS.map((h) => `--connect-to ${h}:127.0.0.1:${apiPort()}`).join(' ')} --max-time 20 -H "X-Doc-Example: $DOC_STEP" "$@"; }`,
      ];
      for (const example of examples) {
        for (const command of example.commands.filter((c) => CURL_COMMAND.test(c.text))) {
          const id = stepFor(doc, example, command.line, command.text);
          lines.push(
            `DOC_STEP=${id}`,
            `printf '\\n@@step ${id}\\n'`,
            command.text,
            `printf '\\n@@exit ${id} %s\\n' "$?"`,
          );
        }
      }
      const env = { PATH: process.env.PATH!, HOME: home, KEY: apiKey };
      const { stdout } = await exec('bash', ['-c', lines.join('\n')], { env, timeout: 120_000 }).catch(
        (error: { stdout: string }) => error,
      );
      const results = new Map<string, { exit?: number; output: string }>();
      for (const [, id, output] of stdout.matchAll(/\n@@step (\d+)\n([\s\S]*?)(?=\n@@exit \d+ |$)/g))
        results.set(id, { output, exit: Number(new RegExp(`\\n@@exit ${id} (\\d+)\\n`).exec(stdout)?.[1]) });
      return results;
    }

    /**
     * Runs one TypeScript example as an async module body, `@petstore/client` being the SDK; `process.env` holds the
     * demo key as KEY (npm start's `export KEY=...`) and as PETSTORE_API_KEY, and PETSTORE_URL (the SDK README's names).
     */
    async function runTypescript(
      doc: string,
      example: DocExample,
    ): Promise<{ id: string; error?: unknown; output: string }> {
      const id = stepFor(doc, example, example.line, example.code.split('\n')[0]);
      const printed: string[] = [];
      const console = { log: (...args: unknown[]) => printed.push(args.map((a) => JSON.stringify(a)).join(' ')) };
      globalThis.fetch = (input, init) => {
        const url = new URL(input instanceof Request ? input.url : input);
        if (!DOCUMENTED_HOSTS.includes(url.host)) throw new Error(`the example fetched ${url.href}`);
        url.host = `127.0.0.1:${apiPort()}`;
        const headers = new Headers(init?.headers);
        headers.set('X-Doc-Example', id);
        return realFetch(url, { ...init, headers });
      };
      const require = (name: string) => ({ '@petstore/client': sdk })[name];
      try {
        const run = new AsyncFunction('require', 'exports', 'console', 'process', transpileDocCode(example.code));
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('still running after 30 s')), 30_000);
        });
        await Promise.race([
          run(require, {}, console, {
            env: { KEY: apiKey, PETSTORE_API_KEY: apiKey, PETSTORE_URL: 'http://localhost:3000' },
          }),
          timeout,
        ]).finally(() => clearTimeout(timer));
        return { id, output: printed.join('\n') };
      } catch (error) {
        return { id, error, output: printed.join('\n') };
      } finally {
        globalThis.fetch = realFetch;
      }
    }

    /** What went wrong with a step, if anything: its exit or error, then the answers it got. */
    function failuresOf(id: string, outcome: { exit?: number; error?: unknown; output: string }, shell: boolean) {
      const step = steps.get(id)!;
      const got = answers.filter((a) => a.step === id);
      const problems: string[] = [];
      if (shell && outcome.exit !== 0)
        problems.push(outcome.exit === undefined ? 'did not finish' : `exit ${outcome.exit}`);
      if (!shell && outcome.error) problems.push(`threw ${String(outcome.error)}`);
      if (!got.length) problems.push('made no request to the API');
      for (const a of got.filter((a) => a.status >= 400)) problems.push(`answered ${a.status}`);
      if (!/deprecat/i.test(step.heading))
        for (const a of got.filter((a) => a.deprecated)) problems.push(`called the deprecated ${a.method} ${a.path}`);
      if (!problems.length) return [];
      const shown = got.map((a) => `${a.method} ${a.path} → ${a.status} ${a.body}`.trim()).join('\n      ');
      return [
        `${step.doc}:${step.line} (under "${step.heading}"): ${step.text.split('\n')[0]}\n` +
          `    ${problems.join('; ')}\n` +
          (shown ? `    answers: ${shown}\n` : '') +
          (outcome.output.trim() ? `    output: ${outcome.output.trim().slice(0, 500)}` : ''),
      ];
    }

    const counted: Record<string, { run: number; notRun: number }> = {};

    it.each(DOCS.map((doc) => [doc]))(
      '%s: every example not marked not-run succeeds',
      async (doc) => {
        const examples = docExamples(readFileSync(join(root, doc), 'utf8'));
        const marked = examples.filter((e) => e.notRun !== undefined);
        const toRun = examples.filter((e) => e.notRun === undefined);
        const failures: string[] = [];
        // Only curl is run from a shell example: anything else is refused (mark its block, or move it to the prose).
        const shell = toRun.filter((e) => e.kind === 'shell');
        for (const example of shell) {
          const others = example.commands.filter((c) => !CURL_COMMAND.test(c.text));
          for (const c of others)
            failures.push(
              `${doc}:${c.line} (under "${example.heading}"): ${c.text.split('\n')[0]}\n    not an API call: mark its block <!-- not-run: reason --> or move it to the prose`,
            );
        }
        if (shell.length) {
          const results = await runShell(doc, shell);
          for (const example of shell)
            for (const command of example.commands.filter((c) => CURL_COMMAND.test(c.text))) {
              const id = [...steps].find(([, s]) => s.doc === doc && s.line === command.line)![0];
              failures.push(...failuresOf(id, results.get(id) ?? { output: '' }, true));
            }
        }
        for (const example of toRun.filter((e) => e.kind === 'typescript')) {
          const outcome = await runTypescript(doc, example);
          failures.push(...failuresOf(outcome.id, outcome, false));
        }
        counted[doc] = { run: toRun.length, notRun: marked.length };
        process.stdout.write(`${doc}: ${toRun.length} examples run, ${marked.length} marked not-run\n`);
        expect(failures).toEqual([]);
      },
      180_000,
    );

    it('counts the examples marked not-run, each with its reason, and runs more than it leaves out', () => {
      const marks = Object.fromEntries(
        DOCS.map((doc) => [doc, docExamples(readFileSync(join(root, doc), 'utf8')).filter((e) => e.notRun).length]),
      );
      expect(marks).toEqual(NOT_RUN);
      const run = Object.values(counted).reduce((n, c) => n + c.run, 0);
      expect(run).toBeGreaterThan(Object.values(NOT_RUN).reduce((n, c) => n + c, 0));
    });
  },
);
