import { relative } from 'node:path';
import { sqlFileOf, staleSqlFiles } from '../scripts/generate-sql';

it('every checked-in libs/*/src/*.queries.sql is what its query file generates (npm run sql:generate)', () => {
  expect(staleSqlFiles().map((file) => relative(process.cwd(), sqlFileOf(file)))).toEqual([]);
});
