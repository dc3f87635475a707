import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

const root = join(__dirname, '..', '..', '..');
const run = promisify(execFile);
// Without the npm_* variables of an outer `npm run`, whose prefix would point npm back at this repository.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));

/** What a user of the SDK runs, from ESM and from CommonJS: the same calls, the same printed result. */
const usage = (load: string) => `${load}
const petstore = new PetstoreClient({ apiKey: process.env.PETSTORE_API_KEY, baseUrl: process.env.PETSTORE_URL });
const main = async () => {
  const category = await petstore.categories.create({ name: 'installed-' + process.argv[2] });
  const pet = await petstore.pets.create({ name: 'Rex', categoryId: category.id });
  const { data } = await petstore.call('GET', '/pets/{petId}', { path: { petId: pet.id } });
  const listed = [];
  for await (const p of petstore.list('/pets', { query: { categoryId: category.id, limit: 1 } })) listed.push(p.name);
  const error = await petstore.orders.get(999999999).catch((e) => e);
  console.log(JSON.stringify({ fetched: data.name, listed, error: error instanceof PetstoreError && error.code }));
};
main();
`;

/** The same from TypeScript, type-checked against the installed declarations (node16 resolution: exports and conditions). */
const typed = `import { PetstoreClient, type Pet } from '@petstore/client';
const petstore = new PetstoreClient({ apiKey: 'k', baseUrl: 'http://localhost' });
export const pets: Promise<Pet[]> = petstore.call('GET', '/pets', { query: { status: 'sold' } }).then((r) => r.data);
// @ts-expect-error \`lost\` is not a pet status: the installed types know the document's filters.
petstore.call('GET', '/pets', { query: { status: 'lost' } });
`;

/** `npm pack` of packages/client installed into an empty project, then used there against the running API. */
describe('the SDK as an installed package', () => {
  let api: RunningApi;
  let apiKey: string;
  let project: string;
  let packed: { files: { path: string }[]; version: string };

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'petstore-sdk-user-'));
    const pack = await run('npm', ['pack', '--json', '--pack-destination', project], {
      cwd: join(root, 'packages/client'),
      env,
    });
    [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true }));
    const tarball = join(project, `petstore-client-${packed.version}.tgz`);
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project, env });
    writeFileSync(join(project, 'use.mjs'), usage("import { PetstoreClient, PetstoreError } from '@petstore/client';"));
    writeFileSync(
      join(project, 'use.cjs'),
      usage("const { PetstoreClient, PetstoreError } = require('@petstore/client');"),
    );
    writeFileSync(join(project, 'typed.mts'), typed);
    writeFileSync(join(project, 'typed.cts'), typed);
    api = await startApi();
    apiKey = (await createAccount(api, 'pro')).apiKey;
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    rmSync(project, { recursive: true, force: true });
  });

  it('ships the ESM and CommonJS builds with their declarations, a README and the MIT licence, and no dependency', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'dist/index.mjs',
        'dist/index.d.mts',
        'dist/index.cjs',
        'dist/index.d.cts',
      ]),
    );
    expect(paths.filter((p) => !/^(dist\/|LICENSE$|README\.md$|package\.json$)/.test(p))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/@petstore/client/package.json'), 'utf8'));
    expect(manifest).toEqual(
      expect.objectContaining({ license: 'MIT', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) }),
    );
    expect(manifest.dependencies).toBeUndefined();
    expect(readFileSync(join(project, 'node_modules/@petstore/client/LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  // Inlined into each entry's declarations, the 540 kB of generated types made each 670 kB.
  it("ships the document's generated types once: both declaration entries import one shared file", () => {
    const dist = join(project, 'node_modules/@petstore/client/dist');
    expect(readFileSync(join(dist, 'openapi.d.ts'), 'utf8')).toMatch(/^export interface paths \{/m);
    for (const entry of ['index.d.mts', 'index.d.cts']) {
      const declarations = readFileSync(join(dist, entry), 'utf8');
      expect(declarations).toMatch(/^import \{[^}]*\bpaths\b[^}]*\} from '\.\/openapi\.js';$/m);
      expect(declarations).not.toMatch(/^(export )?interface (paths|operations) \{/m);
      expect(Buffer.byteLength(declarations)).toBeLessThan(100_000);
    }
  });

  it.each([['use.mjs'], ['use.cjs']])('works when loaded by %s against the running API', async (script) => {
    const { stdout } = await run(process.execPath, [script, script], {
      cwd: project,
      env: { ...env, PETSTORE_URL: api.url, PETSTORE_API_KEY: apiKey },
    });
    process.stdout.write(`${script}: ${stdout}`);
    expect(JSON.parse(stdout)).toEqual({ fetched: 'Rex', listed: ['Rex'], error: 'not_found' });
  });

  it('type-checks a TypeScript user, ESM and CommonJS, through the exports map', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const options = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--module',
      'node16',
      '--target',
      'es2022',
      '--types',
      'node',
    ];
    const typeRoots = ['--typeRoots', join(root, 'node_modules/@types')];
    await expect(
      run(process.execPath, [tsc, ...options, ...typeRoots, 'typed.mts', 'typed.cts'], { cwd: project }),
    ).resolves.toBeDefined();
  }, 60_000);

  it.each([[['es2022', 'dom']], [['es2022']]])(
    'type-checks a TypeScript user with no @types/node and lib %j, its declarations included, ESM and CommonJS',
    async (lib) => {
      const bare = { strict: true, noEmit: true, types: [], lib, module: 'node16', target: 'es2022' };
      writeFileSync(
        join(project, 'tsconfig.bare.json'),
        JSON.stringify({ compilerOptions: bare, files: ['typed.mts', 'typed.cts'] }),
      );
      const tsc = join(root, 'node_modules/typescript/bin/tsc');
      // A failed run rejects with the same stdout: tsc's errors, shown by the assertion.
      const { stdout } = await run(process.execPath, [tsc, '-p', 'tsconfig.bare.json'], { cwd: project }).catch(
        (error: { stdout: string }) => error,
      );
      expect(stdout).toBe('');
    },
    60_000,
  );
});
