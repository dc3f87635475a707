import { INestApplicationContext } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cliEnv, runCliCollecting } from '../../support/cli';
import { eventually, HttpClient } from '../../support/http';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';

const exec = promisify(execFile);

/** `petstore trigger ...` in this process (runCli); its exit code, stdout and stderr whatever the outcome. */
const trigger = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  runCliCollecting({ PETSTORE_API_KEY: undefined, ...env }, ['trigger', ...args]);

/** The same through package.json's bin, a process of its own. */
async function triggerThroughBin(env: NodeJS.ProcessEnv, ...args: string[]) {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/petstore.mjs', 'trigger', ...args], {
      env: cliEnv({ PETSTORE_API_KEY: undefined, ...env }),
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Each type `trigger` makes, and the resource its event names (one of the ids it printed). */
const SUPPORTED: [type: string, resource: string][] = [
  ['category.created', 'categoryId'],
  ['category.updated', 'categoryId'],
  ['category.deleted', 'categoryId'],
  ['pet.created', 'petId'],
  ['pet.updated', 'petId'],
  ['pet.deleted', 'petId'],
  ['pet.status_changed', 'petId'],
  ['inventory.updated', 'petId'],
  ['order.placed', 'orderId'],
  ['order.cancelled', 'orderId'],
  ['order.completed', 'orderId'],
  ['message.processed', 'messageId'],
  ['message.failed', 'messageId'],
  ['api_key.created', 'keyId'],
  ['api_key.revoked', 'keyId'],
  ['api_key.rotated', 'keyId'],
];

describe('npx petstore trigger <event-type>', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let http: HttpClient;
  let apiKey: string;

  beforeAll(async () => {
    // One attempt: message.failed comes at once.
    api = await startApi({ JOB_ATTEMPTS: '1' });
    worker = await startWorker({ JOB_ATTEMPTS: '1' });
    ({ apiKey } = await createAccount(api));
    http = new HttpClient(api.url, apiKey);
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close()]));

  it.each(SUPPORTED)(
    '%s: makes that event through the API, seen in GET /v1/events',
    async (type, resource) => {
      const { code, stdout, stderr } = await trigger(
        { PETSTORE_API_KEY: apiKey },
        type,
        '--base-url',
        api.url,
        '--json',
      );
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const done = JSON.parse(stdout) as { type: string; steps: string[]; resources: Record<string, number | string> };
      expect(done.type).toBe(type);
      const id = String(done.resources[resource]);
      expect(id).not.toBe('undefined');
      const events = await eventually(async () => {
        const { body } = await http.get(`/v1/events?type=${type}&order=newest&limit=20`);
        const list = (body as { resourceId: string }[]).filter((e) => e.resourceId === id);
        return list.length ? list : undefined;
      }, 20_000);
      expect(events).toHaveLength(1);
    },
    40_000,
  );

  it('says what it did in plain text, with the ids, through the bin (a process: nothing else on stdout or stderr)', async () => {
    const { code, stdout, stderr } = await triggerThroughBin(
      {},
      'pet.created',
      '--api-key',
      apiKey,
      '--base-url',
      api.url,
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Triggered pet\.created: category \d+ (used|created), pet \d+ created\n$/);
  });

  it('a type it cannot make, or none: a usage error naming those it can, exit code 2', async () => {
    for (const args of [['api_key.banned'], ['no.such_type'], []]) {
      const { code, stdout, stderr } = await trigger({ PETSTORE_API_KEY: apiKey }, ...args, '--base-url', api.url);
      expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(stderr).toContain(`supported: ${SUPPORTED.map(([t]) => t).join(', ')}`);
    }
  });

  it("a key the API refuses: the API's message, exit code 1", async () => {
    const { code, stderr } = await trigger({}, 'pet.created', '--api-key', 'pst_not_a_real_key', '--base-url', api.url);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: /m);
  });
});
