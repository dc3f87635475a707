import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README and docs/ travel with the repository: every relative link must reach a file in it
 * (moving a doc must update its links), and nothing may point outside it.
 */
const root = resolve(__dirname, '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

describe('README and docs', () => {
  it('link only to files that exist in the repository', () => {
    const broken = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
        .map((m) => m[1])
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => {
          const path = resolve(dirname(file), target);
          return relative(root, path).startsWith('..') || !existsSync(path);
        })
        .map((target) => `${relative(root, file)}: ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('name no path outside the repository', () => {
    const outside = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/`(\.\.\/[^`\s]+)`/g)]
        .map((m) => m[1])
        .filter((path) => relative(root, resolve(dirname(file), path)).startsWith('..'))
        .map((path) => `${relative(root, file)}: ${path}`),
    );
    expect(outside).toEqual([]);
  });
});
