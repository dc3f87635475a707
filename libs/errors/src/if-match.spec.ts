import { ApiError } from './api-error';
import { assertIfMatch, entityTag } from './if-match';

describe('entity tags', () => {
  it('is a quoted hash that changes with the representation', () => {
    const tag = entityTag({ id: 1, name: 'a' });
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(entityTag({ id: 1, name: 'a' })).toBe(tag);
    expect(entityTag({ id: 1, name: 'b' })).not.toBe(tag);
  });

  it('If-Match passes when absent, `*` or listing the current tag; otherwise 412', () => {
    const current = { id: 1 };
    const tag = entityTag(current);
    expect(() => assertIfMatch(undefined, current)).not.toThrow();
    expect(() => assertIfMatch('*', current)).not.toThrow();
    expect(() => assertIfMatch(`"x", ${tag}`, current)).not.toThrow();
    expect(() => assertIfMatch('"x"', current)).toThrow(ApiError);
    // Strong comparison: a weak tag never satisfies If-Match.
    expect(() => assertIfMatch(`W/${tag}`, current)).toThrow(
      expect.objectContaining({ code: 'precondition_failed', status: 412 }),
    );
  });

  it('an empty or blank If-Match is a list that matches nothing (RFC 9110 13.1.1): 412, not absent', () => {
    const current = { id: 1 };
    for (const header of ['', ' ', '\t', ' , '])
      expect(() => assertIfMatch(header, current)).toThrow(
        expect.objectContaining({ code: 'precondition_failed', status: 412 }),
      );
  });
});
