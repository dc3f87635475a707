import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..');

/** packages/client builds on its own (no import outside the package) into what `npm pack` ships. */
describe('the SDK as a package', () => {
  let out: string;

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'petstore-client-'));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(process.execPath, [tsc, '-p', join(root, 'packages/client/tsconfig.build.json'), '--outDir', out]);
  }, 60_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('compiles to JavaScript and declarations with the generated document types beside them', () => {
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'generated']));
    expect(readdirSync(join(out, 'generated'))).toContain('openapi.d.ts');
  });

  it('exports the client, its error and the webhook verifier from the built entry point', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sdk = require(join(out, 'index.js'));
    expect(Object.keys(sdk)).toEqual(
      expect.arrayContaining(['PetstoreClient', 'PetstoreError', 'verifyWebhook', 'WebhookSignatureError']),
    );
  });
});
