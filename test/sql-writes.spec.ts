import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { queryFiles, queryStatements } from '../scripts/generate-sql';

const ARCHITECTURE = join(__dirname, '..', 'docs', 'internals', 'architecture.md');

// A write's target: FOR UPDATE, FOR NO KEY UPDATE and ON CONFLICT ... DO UPDATE lock or upsert, they name no table.
const WRITE = /(?<!\b(?:FOR|DO|KEY)\s+)\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_]+)/gi;

/** Generic statements run on the table their caller names (a retention source's), listed under that library. */
const ON_CALLERS_TABLE = /^retentionQueries\./;

/** architecture.md's list: "- `<lib>`: `table`, other's `table` (...)", by library. */
function documentedWrites(): Map<string, string[]> {
  const listed = new Map<string, string[]>();
  for (const [, lib, rest] of readFileSync(ARCHITECTURE, 'utf8').matchAll(/^- `([a-z-]+)`: (.*(?:\n {2}.*)*)/gm))
    listed.set(
      lib,
      [...rest.replace(/\([^)]*\)/g, '').matchAll(/`([a-z_]+)`/g)].map(([, table]) => table),
    );
  return listed;
}

it("each library's queries write only the tables architecture.md lists for it", () => {
  const listed = documentedWrites();
  const unlisted: string[] = [];
  for (const file of queryFiles()) {
    const lib = basename(file, '.queries.ts');
    for (const { name, statement } of queryStatements(file).filter((s) => !ON_CALLERS_TABLE.test(s.name)))
      for (const [, table] of statement.text.matchAll(WRITE))
        if (!listed.get(lib)?.includes(table)) unlisted.push(`${lib}: ${name} writes ${table}`);
  }
  expect(unlisted).toEqual([]);
});
