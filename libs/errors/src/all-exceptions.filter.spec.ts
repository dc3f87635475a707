import { isUnavailableError } from './all-exceptions.filter';

describe('isUnavailableError', () => {
  it.each([
    ['08001', 'no server takes writes (a failover under way)'],
    ['25006', 'a write on a server demoted to a standby'],
    ['57P01', 'admin shutdown (a switchover stops the old primary)'],
    ['57P03', 'cannot connect now (a server starting up)'],
    ['ECONNREFUSED', 'the primary gone'],
    ['ECONNRESET', 'its connections cut'],
  ])('%s, %s: 503', (code) => {
    expect(isUnavailableError(Object.assign(new Error('x'), { code }))).toBe(true);
    expect(isUnavailableError({ driverError: { code } })).toBe(true);
  });

  it('a unique violation or a syntax error is not', () => {
    expect(isUnavailableError(Object.assign(new Error('x'), { code: '23505' }))).toBe(false);
    expect(isUnavailableError(Object.assign(new Error('x'), { code: '42601' }))).toBe(false);
  });
});
