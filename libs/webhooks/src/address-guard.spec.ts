import { checkWebhookUrl, isPrivateAddress, resolveWebhookTarget, Resolver, UnsafeWebhookUrl } from './address-guard';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '2002:808:808::', // 6to4 is refused whole (RFC 7526 deprecated it): the relay is anyone's
    '64:ff9b:1::808:808',
    '2001::1',
    '[::1]',
    'not-an-ip',
  ])('refuses %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('accepts public %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});

describe('resolveWebhookTarget', () => {
  const dns =
    (table: Record<string, string[]>): Resolver =>
    async (host) => {
      const list = table[host];
      if (!list) throw new Error('ENOTFOUND');
      return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  const resolver = dns({ 'public.example': ['93.184.216.34'], 'mixed.example': ['93.184.216.34', '10.0.0.5'] });

  it('accepts a public http(s) URL and returns the checked addresses', async () => {
    const target = await resolveWebhookTarget('https://public.example/hook', false, resolver);
    expect(target.url.href).toBe('https://public.example/hook');
    expect(target.addresses).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it.each([
    ['ftp://public.example/x', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['not a url', /absolute/],
    ['http://user:pw@public.example/', /credentials/],
    ['http://127.0.0.1/', /private/],
    ['http://localhost.example/', /does not resolve/],
    ['http://[::1]:8080/', /private/],
    ['http://[::ffff:127.0.0.1]/', /private/],
    ['http://2130706433/', /private/], // 127.0.0.1 written as one number
    ['http://0x7f.1/', /private/],
    ['http://mixed.example/', /private/], // every resolved address must be public
  ])('refuses %s', async (url, message) => {
    const attempt = resolveWebhookTarget(url, false, resolver);
    await expect(attempt).rejects.toBeInstanceOf(UnsafeWebhookUrl);
    await expect(resolveWebhookTarget(url, false, resolver)).rejects.toThrow(message);
  });

  it('lets private targets through only when allowed, and still only over http(s)', async () => {
    await expect(resolveWebhookTarget('http://127.0.0.1:9999/x', true, resolver)).resolves.toEqual(
      expect.objectContaining({ addresses: [{ address: '127.0.0.1', family: 4 }] }),
    );
    await expect(resolveWebhookTarget('ftp://127.0.0.1/', true, resolver)).rejects.toThrow(/http or https/);
  });
});

describe('checkWebhookUrl (creation and URL changes: no DNS lookup)', () => {
  it.each(['http://hook.invalid/x', 'https://internal-only.example/x', 'http://runsc/x', 'http://93.184.216.34/x'])(
    'accepts %s without resolving it',
    (url) => {
      expect(checkWebhookUrl(url, false).href).toBe(url);
    },
  );

  it.each([
    'http://localhost/x',
    'http://LOCALHOST./x',
    'http://api.localhost/x',
    'http://127.0.0.1/x',
    'http://[::1]/x',
    'http://0x7f.1/x',
  ])('refuses %s as written', (url) => {
    expect(() => checkWebhookUrl(url, false)).toThrow(/private, loopback/);
    expect(checkWebhookUrl(url, true).protocol).toBe('http:');
  });

  it.each([
    ['ftp://public.example/x', /http or https/],
    ['not a url', /absolute/],
    ['http://user:pw@public.example/', /credentials/],
  ])('refuses %s whatever is allowed', (url, message) => {
    expect(() => checkWebhookUrl(url, true)).toThrow(message);
  });
});
