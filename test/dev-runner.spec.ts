import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** `npm run start:dev` and the Node version files a newcomer's tools read. */
describe('development runner', () => {
  it('.nvmrc (nvm) names the Node version of .node-version (nodenv, fnm, asdf, volta, setup-node)', () => {
    expect(existsSync(join(root, '.nvmrc'))).toBe(true);
    expect(read('.nvmrc').trim()).toBe(read('.node-version').trim());
  });

  // ts-node has had no release since 2023: start:dev runs the tsc build under `nest build --watch`.
  it('start:dev runs the build under watch, not ts-node', () => {
    const start = read('scripts/start.mjs');
    expect(start).not.toMatch(/ts-node\/register|src\/main\.ts/);
    expect(start).toMatch(/'build', '--watch'/);
    expect((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['start:dev']).toBe(
      'exec node scripts/start.mjs --watch',
    );
  });
});
