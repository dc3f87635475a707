import { joinSql, raw, sql } from './sql';

describe('sql', () => {
  it('numbers each interpolated value as a parameter in order', () => {
    const q = sql`SELECT * FROM pets WHERE account_id = ${7} AND name = ${"O'Brien"}`;
    expect(q.text).toBe('SELECT * FROM pets WHERE account_id = $1 AND name = $2');
    expect(q.values).toEqual([7, "O'Brien"]);
  });

  it('splices fragments and renumbers their parameters after the ones before them', () => {
    const filters = [sql`p.status = ${'sold'}`, sql`p.category_id = ${3}`];
    const q = sql`SELECT ${raw('p.id')} FROM pets p WHERE p.account_id = ${1} AND ${joinSql(filters, ' AND ')} LIMIT ${21}`;
    expect(q.text).toBe(
      'SELECT p.id FROM pets p WHERE p.account_id = $1 AND p.status = $2 AND p.category_id = $3 LIMIT $4',
    );
    expect(q.values).toEqual([1, 'sold', 3, 21]);
  });

  it('keeps a fragment with no parameters as plain text', () => {
    expect(sql`a ${raw('')}b ${joinSql([], ' AND ')}c`.text).toBe('a b c');
  });

  it('gives the same text for the same shape whatever the values', () => {
    const shape = (v: string) => sql`x = ${v}`.text;
    expect(shape('1; DROP TABLE pets')).toBe(shape('2'));
  });
});
