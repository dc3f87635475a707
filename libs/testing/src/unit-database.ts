// A unit spec that needs Postgres gets its own database, named after the test database
// (TEST_DATABASE_URL), so two runs with different TEST_DATABASE_URLs never share one.
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/petstore_test';

/** `{ url, name }` of `<test database>_unit_<suffix>`. */
export function unitDatabase(suffix: string): { url: string; name: string } {
  const url = new URL(TEST_DATABASE_URL);
  const name = `${url.pathname.slice(1)}_unit_${suffix}`;
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}
