import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Decisions are short records (docs/internals/decisions/NNNN-title.md): context, decision,
 * consequences, at most 60 lines each; measurements go to the benchmark log. Code and docs point
 * to a record by its file name, which must exist.
 */
const root = resolve(__dirname, '..');
const recordsDir = join(root, 'docs/internals/decisions');
const MAX_LINES = 60;
const HEADINGS = ['## Context', '## Decision', '## Consequences'];

const records = existsSync(recordsDir) ? readdirSync(recordsDir).filter((name) => name !== 'README.md') : [];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === 'node_modules' || e.name === 'dist'
      ? []
      : e.isDirectory()
        ? filesUnder(join(dir, e.name))
        : /\.(ts|mjs|js|md|json|ya?ml|sh)$/.test(e.name)
          ? [join(dir, e.name)]
          : [],
  );
}

const sources = [
  ...['apps', 'libs', 'test', 'scripts', 'bench', 'docs', 'deploy'].flatMap((dir) => filesUnder(join(root, dir))),
  join(root, 'README.md'),
  join(root, 'Dockerfile'),
];

describe('decision records', () => {
  it('exist, each named NNNN-kebab-title.md', () => {
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((name) => !/^\d{4}-[a-z0-9]+(-[a-z0-9]+)*\.md$/.test(name))).toEqual([]);
  });

  it(`are at most ${MAX_LINES} lines each`, () => {
    const long = records
      .map((name) => [name, readFileSync(join(recordsDir, name), 'utf8').trimEnd().split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('have the context, decision and consequences headings, in that order', () => {
    const missing = records.filter((name) => {
      const headings = readFileSync(join(recordsDir, name), 'utf8').match(/^## .+$/gm) ?? [];
      return HEADINGS.join('\n') !== headings.filter((h) => HEADINGS.includes(h)).join('\n');
    });
    expect(missing).toEqual([]);
  });

  it('are each listed once in the index', () => {
    const index = readFileSync(join(recordsDir, 'README.md'), 'utf8');
    expect(records.filter((name) => index.split(`(${name})`).length !== 2)).toEqual([]);
  });

  it('named by code comments and docs exist', () => {
    const named = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/decisions\/(\d{4}-[a-z0-9-]+\.md)/g)]
        .filter(([, name]) => !existsSync(join(recordsDir, name)))
        .map(([, name]) => `${relative(root, file)}: ${name}`),
    );
    expect(named).toEqual([]);
  });

  it('replace decisions.md, which code comments and docs no longer name', () => {
    const named = sources.filter((file) => file !== __filename && /\bdecisions\.md\b/.test(readFileSync(file, 'utf8')));
    expect(named.map((file) => relative(root, file))).toEqual([]);
  });
});
