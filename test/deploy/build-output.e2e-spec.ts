import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';

/**
 * The tsc build (`npm run build`, which `npm test` runs first when dist/ is stale) runs on node
 * alone: Nest CLI's tsc builder rewrites the tsconfig path aliases (@app/*, @petstore/client)
 * to relative requires, since nothing resolves them at run time; and the image ships no test code.
 */
const root = join(__dirname, '..', '..');
const dist = join(root, 'dist');

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

const built = ['apps', 'libs', 'packages'].flatMap((d) => (existsSync(join(dist, d)) ? jsFiles(join(dist, d)) : []));
const requires = built.flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => ({ file, specifier: m[1] })),
);

describe('build output (dist/)', () => {
  it('has an entry for each app at dist/apps/<app>/src/main.js', () => {
    for (const app of ['api', 'worker', 'cli'])
      expect(existsSync(join(dist, 'apps', app, 'src', 'main.js'))).toBe(true);
  });

  it('requires no tsconfig path alias: each one is rewritten to a relative path', () => {
    expect(requires.length).toBeGreaterThan(0);
    const aliased = requires.filter(({ specifier }) => /^@(app|petstore)\//.test(specifier));
    expect(aliased.map(({ file, specifier }) => `${relative(root, file)}: ${specifier}`)).toEqual([]);
  });

  it('resolves every relative require to a file of the build', () => {
    const missing = requires
      .filter(({ specifier }) => specifier.startsWith('.'))
      .filter(({ file, specifier }) => {
        const target = join(dirname(file), specifier);
        return ![target, `${target}.js`, join(target, 'index.js')].some(existsSync);
      });
    expect(missing.map(({ file, specifier }) => `${relative(root, file)}: ${specifier}`)).toEqual([]);
  });

  it('requires only Node’s modules and production dependencies: the image installs no others', () => {
    const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const packageOf = (s: string) =>
      s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/');
    const outside = requires.filter(
      ({ specifier }) =>
        !specifier.startsWith('.') &&
        !specifier.startsWith('node:') &&
        !builtinModules.includes(specifier) &&
        !(packageOf(specifier) in dependencies),
    );
    expect(outside.map(({ file, specifier }) => `${relative(root, file)}: ${specifier}`)).toEqual([]);
  });

  it('holds no spec or test support code', () => {
    const testCode = built.filter((file) => /\.(e2e-)?spec\.js$/.test(file) || relative(dist, file).startsWith('test'));
    expect(testCode.map((file) => relative(root, file))).toEqual([]);
  });
});
