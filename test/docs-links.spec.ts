import { tmpdir } from 'node:os';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README and docs/ travel with the repository: every relative link must reach a file in it
 * (moving a doc must update its links), and a heading it names (#anchor) in that file; nothing
 * may point outside it.
 */
const root = resolve(__dirname, '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

/** The text outside fenced code blocks: a `# comment` in a shell example is no heading, a `[x](y)` in code no link. */
const prose = (file: string) => readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** The anchors GitHub gives a file's headings (its slug rule, -1, -2... for repeats) and its explicit ids. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(file).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n ? `${slug}-${n}` : slug);
  }
  for (const [, id] of prose(file).matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** Every relative link of every file: [source file, target path (the file itself for #x), anchor]. */
const links = files.flatMap((file) =>
  [...prose(file).matchAll(/\]\(([^)#\s]*)(?:#([^)\s]*))?\)/g)]
    .filter(([, target]) => !/^[a-z]+:/.test(target))
    .map(([, target, anchor]) => ({ file, target, path: target ? resolve(dirname(file), target) : file, anchor })),
);

describe('README and docs', () => {
  it('link only to files that exist in the repository', () => {
    const broken = links
      .filter(({ path }) => relative(root, path).startsWith('..') || !existsSync(path))
      .map(({ file, target }) => `${relative(root, file)}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('link only to headings that exist in the file linked to', () => {
    const broken = links
      .filter(({ path, anchor }) => anchor && path.endsWith('.md') && existsSync(path) && statSync(path).isFile())
      .filter(({ path, anchor }) => !anchorsOf(path).has(decodeURIComponent(anchor)))
      .map(({ file, target, anchor }) => `${relative(root, file)}: ${target}#${anchor}`);
    expect(broken).toEqual([]);
  });

  it('name no path outside the repository, nor do the lint rulesets and compose file', () => {
    const configs = readdirSync(root)
      .filter((name) => /\.ya?ml$/.test(name))
      .map((name) => join(root, name));
    // An absolute path beside this checkout (another worktree, a shared folder) is in no clone.
    // Not when the checkout sits in the temp folder (a CI clone): docs may name temp files there.
    const parent = dirname(root);
    const beside =
      parent === tmpdir() || parent === '/'
        ? /$^/g
        : new RegExp(`(?<![\\w:/.~-])${parent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[\\w./-]+`, 'g');
    const outside = [...files, ...configs].flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [
        ...[...text.matchAll(/`(\.\.\/[^`\s]+)`/g)]
          .map((m) => m[1])
          .filter((path) => relative(root, resolve(dirname(file), path)).startsWith('..')),
        ...[...text.matchAll(beside)].map((m) => m[0]),
      ].map((path) => `${relative(root, file)}: ${path}`);
    });
    expect(outside).toEqual([]);
  });
});
