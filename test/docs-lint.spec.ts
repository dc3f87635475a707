import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DOCS_PAGES, formatFinding, lintDocs } from '../scripts/docs-lint';

const root = join(__dirname, '..');

describe('the docs lint (npm run lint:docs)', () => {
  it('finds the figures the README and its guides state to match the code', () => {
    expect(lintDocs().map(formatFinding)).toEqual([]);
  });

  it('names the file and line of a figure that drifted, and what the code says', () => {
    const copy = mkdtempSync(join(tmpdir(), 'docs-lint-'));
    try {
      for (const file of [...DOCS_PAGES, 'openapi.json']) {
        mkdirSync(dirname(join(copy, file)), { recursive: true });
        cpSync(join(root, file), join(copy, file));
      }
      const readme = readFileSync(join(copy, 'README.md'), 'utf8');
      const operations = /\b\d+ operations\b/.exec(readme)!;
      const line = readme.slice(0, operations.index).split('\n').length;
      writeFileSync(join(copy, 'README.md'), readme.replace(operations[0], '0 operations'));

      expect(lintDocs(copy).map(formatFinding)).toEqual([
        expect.stringMatching(new RegExp(`^README\\.md:${line}: says "0 operations"; openapi\\.json has \\d+ `)),
      ]);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
