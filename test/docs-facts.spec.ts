import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@app/config';
import { generateApiKey, generateLegacyApiKey, KeyTags } from '@app/access';

/**
 * The figures the README and the pages it sends newcomers to state, against the code: a count,
 * a format or a port that drifts fails here, not in a newcomer's first hour.
 */
const root = join(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const pages = ['README.md', 'docs/using-the-api.md', 'docs/internals/overview.md', 'docs/development.md'];
const all = (pattern: RegExp) => pages.flatMap((page) => [...read(page).matchAll(pattern)].map((m) => [page, m]));

describe('the figures the docs state', () => {
  it('every "N operations" is the number of operations in openapi.json', () => {
    const document = JSON.parse(read('openapi.json')) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(document.paths).flatMap((item) =>
      Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k)),
    ).length;
    const stated = all(/\b(\d+) operations\b/g);
    expect(stated.length).toBeGreaterThanOrEqual(3);
    expect(stated.map(([page, m]) => [page, Number((m as RegExpMatchArray)[1])])).toEqual(
      stated.map(([page]) => [page, operations]),
    );
  });

  it('API keys are as long as the README and the decisions say, and the parts add up', () => {
    const tags = new KeyTags([{ id: 'k1', key: Buffer.alloc(32, 1) }]);
    const [, readmeLength] = /API key \((\d+) characters/.exec(read('README.md')) ?? [];
    expect(Number(readmeLength)).toBe(generateApiKey(tags).length);

    const decision = /API keys\*\* are (\d+) characters: ([\s\S]+?)\(keys issued before tags:\s+(\d+) characters/.exec(
      read('docs/internals/overview.md'),
    );
    expect(decision).not.toBeNull();
    const [, tagged, parts, legacy] = decision!;
    expect(Number(tagged)).toBe(generateApiKey(tags).length);
    expect(Number(legacy)).toBe(generateLegacyApiKey().length);
    // `pst_` (4) and each "N-character" / "N base62 characters" part.
    const sum =
      4 + [...parts.matchAll(/(\d+)(?:-character| base62 characters)/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(sum).toBe(Number(tagged));
  });

  it("the README's ports are the apps' defaults", () => {
    const readme = read('README.md');
    const defaults = loadConfig({});
    expect(/API on :(\d+)/.exec(readme)?.[1]).toBe(String(defaults.port));
    expect(/worker on :(\d+)/.exec(readme)?.[1]).toBe(String(defaults.workerPort));
    expect(/Prometheus metrics on :(\d+)/.exec(readme)?.[1]).toBe(String(defaults.metricsPort));
    const urls = [...readme.matchAll(/localhost:(\d+)/g)].map((m) => Number(m[1]));
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((port) => port !== defaults.port)).toEqual([]);
  });
});
