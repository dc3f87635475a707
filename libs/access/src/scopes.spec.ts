import { scopesAllow } from './scopes';

describe('scopesAllow', () => {
  it('lets any key of the account through a route that needs any scope', () => {
    expect(scopesAllow(['admin'], 'any')).toBe(true);
  });

  it('lets a write key read, as write implies read', () => {
    expect(scopesAllow(['write'], 'read')).toBe(true);
  });

  it('keeps a read key from writing', () => {
    expect(scopesAllow(['read'], 'write')).toBe(false);
  });

  it('keeps an admin-only key from reading the catalogue', () => {
    expect(scopesAllow(['admin'], 'read')).toBe(false);
  });

  it('keeps a write key from managing keys', () => {
    expect(scopesAllow(['read', 'write'], 'admin')).toBe(false);
  });
});
