import { RunningApi, startApi } from '../support/test-apps';

/**
 * An IPv6 client's anonymous budget is its /64's: per exact address, a client holding a /64
 * (as most do) would have 2^64 fresh budgets. Test apps trust X-Forwarded-For.
 */
async function used(api: RunningApi, address: string): Promise<number> {
  const res = await fetch(`${api.url}/v1/pets`, { headers: { 'X-Forwarded-For': address } });
  expect(res.status).toBe(401);
  await res.text();
  return Number(res.headers.get('x-ratelimit-used'));
}

/** A /64 (or address) no other test uses, so counts start at zero. */
const unique = () => Math.floor(Math.random() * 0xffff).toString(16);

describe('anonymous budgets by address', () => {
  let api: RunningApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api?.close());

  it('two addresses in one IPv6 /64 share one budget', async () => {
    const net = `2001:db8:${unique()}:${unique()}`;
    expect(await used(api, `${net}::1`)).toBe(1);
    expect(await used(api, `${net}:dead:beef:1234:5678`)).toBe(2);
    expect(await used(api, `${net}:0:0:0:2`)).toBe(3);
  });

  it('neighbouring IPv6 /64s have separate budgets', async () => {
    const prefix = `2001:db8:${unique()}`;
    expect(await used(api, `${prefix}:1::1`)).toBe(1);
    expect(await used(api, `${prefix}:2::1`)).toBe(1);
  });

  it('IPv4 addresses stay separate, even neighbours', async () => {
    const net = `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;
    expect(await used(api, `${net}.1`)).toBe(1);
    expect(await used(api, `${net}.2`)).toBe(1);
  });

  it('an IPv4-mapped IPv6 address counts as its IPv4 address', async () => {
    const v4 = `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.9`;
    expect(await used(api, v4)).toBe(1);
    expect(await used(api, `::ffff:${v4}`)).toBe(2);
  });
});
