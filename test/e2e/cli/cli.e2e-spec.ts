import { readFileSync } from 'node:fs';
import { hashApiKey } from '@app/access';
import { cli, cliProcess, cliWithEnv, npxPetstore } from '../../support/cli';

interface Created {
  accountId: number;
  keyId: number;
  apiKey: string;
}

describe('operator CLI: help, errors, listings', () => {
  it('--help lists every command on stdout and exits 0', async () => {
    const { stdout } = await cli('--help');
    for (const command of [
      'migrate',
      'account:create',
      'account:set-plan',
      'account:list',
      'key:create',
      'key:list',
      'key:revoke',
      'seed:demo',
    ])
      expect(stdout).toContain(command);
  });

  it('--help starts every command’s summary in one column, however long the longest name', async () => {
    const { stdout } = await cli('--help');
    const rows = stdout.split('\n').filter((line) => /^ {2}[a-z]/.test(line));
    expect(rows.length).toBeGreaterThanOrEqual(10);
    const columns = new Set(rows.map((line) => /^ {2}\S+ +/.exec(line)![0].length));
    expect(columns.size).toBe(1);
  });

  it('<command> --help shows that command’s options and runs nothing', async () => {
    const { stdout } = await cli('account:create', '--help');
    expect(stdout).toMatch(/^Usage: npx petstore account:create --name N --plan /);
    expect(stdout).not.toContain('created');
  });

  it('--version prints the version in package.json, through the bin as well', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect((await cli('--version')).stdout).toBe(`${version}\n`);
    expect((await npxPetstore('--version')).stdout).toBe(`${version}\n`);
  });

  it('through the bin, --json leaves nothing but the JSON on stdout (`npx petstore ... --json | jq`)', async () => {
    const { stdout } = await npxPetstore('account:create', '--name', 'piped', '--plan', 'pro', '--json');
    expect(JSON.parse(stdout)).toMatchObject({ name: 'piped', plan: 'pro', apiKey: expect.stringMatching(/^pst_/) });
  });

  it('an unknown command is named in the error, with exit code 2 (the built file, a process)', async () => {
    await expect(cliProcess({}, 'acount:create', '--name', 'x')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^error: unknown command 'acount:create'\n/),
    });
  });

  it('an unknown option is named in the error, with the command’s usage and exit code 2', async () => {
    await expect(cli('account:create', '--nmae', 'x', '--plan', 'pro')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^error: account:create: unknown option '--nmae'\nUsage: npx petstore account:create /,
      ),
    });
  });

  it('account:list --json lists accounts with their plan and limits, never a key', async () => {
    const created = JSON.parse(
      (await cli('account:create', '--name', 'listed', '--plan', 'pro', '--json')).stdout,
    ) as Created;
    const { stdout } = await cli('account:list', '--after', String(created.accountId - 1), '--json');
    expect(JSON.parse(stdout)).toEqual([
      {
        id: created.accountId,
        name: 'listed',
        plan: 'pro',
        limitPerMinute: null,
        limitPerDay: null,
        createdAt: expect.any(String),
      },
    ]);
    expect(stdout).not.toContain(created.apiKey);
  });

  it('key:list --json lists every key of the account, revoked ones too, with no secret and no hash', async () => {
    const created = JSON.parse(
      (await cli('account:create', '--name', 'keys listed', '--plan', 'pro', '--json')).stdout,
    ) as Created;
    const account = String(created.accountId);
    const second = JSON.parse(
      (await cli('key:create', '--account', account, '--name', 'ci', '--scopes', 'read', '--json')).stdout,
    ) as { keyId: number; apiKey: string };
    await cli('key:revoke', '--account', account, '--key', String(created.keyId));

    const { stdout } = await cli('key:list', '--account', account, '--json');
    const keys = JSON.parse(stdout) as Record<string, unknown>[];
    expect(keys.map((k) => [k.id, k.name, k.scopes, k.revokedAt === null])).toEqual([
      [created.keyId, 'default', ['read', 'write', 'admin'], false],
      [second.keyId, 'ci', ['read'], true],
    ]);
    for (const k of keys)
      expect(Object.keys(k).sort()).toEqual(
        ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'rotatedOutAt', 'scopes'].sort(),
      );
    for (const secret of [created.apiKey, second.apiKey]) {
      expect(stdout).not.toContain(secret);
      expect(stdout).not.toContain(hashApiKey(secret));
    }
    const human = (await cli('key:list', '--account', account)).stdout;
    expect(human).toContain('revoked');
    expect(human).not.toContain(created.apiKey);
  });

  it('account:list and key:list without --json: a header row, then columns that line up under it', async () => {
    const created = JSON.parse(
      (
        await cli(
          'account:create',
          '--name',
          'a longer account name',
          '--plan',
          'enterprise',
          '--limit-minute',
          '5',
          '--limit-day',
          '50',
          '--json',
        )
      ).stdout,
    ) as Created;
    await cli('key:create', '--account', String(created.accountId), '--name', 'ci', '--scopes', 'read');
    const accounts = (await cli('account:list', '--after', String(created.accountId - 1))).stdout.trimEnd().split('\n');
    const keys = (await cli('key:list', '--account', String(created.accountId))).stdout.trimEnd().split('\n');
    expect(accounts[0]).toMatch(/^ID +PLAN +CREATED +NAME$/);
    expect(keys[0]).toMatch(/^ID +PREFIX +SCOPES +STATE +NAME$/);
    expect(keys).toHaveLength(3);
    for (const lines of [accounts, keys]) {
      // Each column starts where its header does.
      const starts = [...lines[0].matchAll(/\S+/g)].map((m) => m.index);
      for (const line of lines.slice(1))
        for (const at of starts) expect([line, line[at - 1] ?? ' ']).toEqual([line, ' ']);
    }
  });

  it('key:list for an account that does not exist says so and exits 1', async () => {
    await expect(cli('key:list', '--account', '999999999')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('not found'),
    });
  });

  it('seed:demo on a database with accounts creates none and says how to make a new key', async () => {
    await cli('account:create', '--name', 'Before the seed', '--plan', 'free');
    const { stdout } = await cliWithEnv({ DEMO_SEED: 'true' }, 'seed:demo', '--json');
    const answer = JSON.parse(stdout) as { seeded: boolean; accountId: number; newKey: string };
    expect(answer).toEqual({ seeded: false, accountId: expect.any(Number), newKey: expect.any(String) });
    expect(answer.newKey).toBe(
      `npx petstore key:create --account ${answer.accountId} --name dev --scopes read,write,admin`,
    );
    const human = await cliWithEnv({ DEMO_SEED: 'true' }, 'seed:demo');
    expect(human.stdout).toContain(`a new key: ${answer.newKey}`);
  });

  it('seed:demo with DEMO_SEED=false creates nothing and says so', async () => {
    const { stdout } = await cliWithEnv({ DEMO_SEED: 'false' }, 'seed:demo', '--json');
    expect(JSON.parse(stdout)).toEqual({ seeded: false });
  });
});
