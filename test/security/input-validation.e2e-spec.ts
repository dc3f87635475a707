import { cli } from '../support/cli';
import { createAccount, RunningApi, startApiWithAccount } from '../support/test-apps';
import { HttpClient } from '../support/http';
import { expectErrorBody } from '../support/expect-error';

/**
 * `ids=` refuses values above 2^53 - 1 (rounded, they name another id), impossible dates (02-30)
 * are refused rather than shifted to March, and names refuse control, bidi and zero-width characters.
 */

const UNSAFE_NAMES: [string, string][] = [
  ['a right-to-left override', 'invoice\u202Efdp.exe'],
  ['a left-to-right isolate', 'Rex\u2066'],
  ['a zero-width space', 'Re\u200Bx'],
  ['a zero-width joiner', 'Re\u200Dx'],
  ['a byte-order mark', '\uFEFFRex'],
  ['a NUL', 'Re\u0000x'],
  ['an escape (terminal control)', 'Rex\u001b[31m'],
  ['a newline', 'Rex\nadmin logged in'],
  ['a C1 control', 'Rex\u0085'],
];

describe('input validation: ids, dates and names', () => {
  let api: RunningApi;
  let http: HttpClient;

  beforeAll(async () => {
    ({ api, http } = await startApiWithAccount());
  });
  afterAll(() => api?.close());

  describe('ids= list filter', () => {
    it.each(['9007199254740992', '9007199254740993', '9999999999999999', '1,9007199254740993'])(
      'answers 400 for %s (above 2^53 - 1) instead of rounding',
      async (ids) => {
        const res = await http.get(`/v1/pets?ids=${ids}`);
        expectErrorBody(res, 400, 'invalid_parameter');
        expect(res.body.details).toEqual([expect.objectContaining({ field: 'ids' })]);
      },
    );

    it('still accepts 2^53 - 1', async () => {
      expect((await http.get('/v1/pets?ids=9007199254740991')).status).toBe(200);
    });
  });

  describe('impossible dates', () => {
    it.each([
      '2099-02-30T00:00:00Z',
      '2099-02-29T00:00:00Z',
      '2099-04-31T12:00:00Z',
      '2099-01-01T24:00:00Z',
      '2099-13-01T00:00:00Z',
    ])('key expiresAt %s: 400 validation_failed, not a shifted date', async (expiresAt) => {
      const res = await http.post('/v1/keys', { name: 'dated', expiresAt });
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'expiresAt' })]);
    });

    it('a leap day that exists is accepted', async () => {
      const res = await http.post('/v1/keys', { name: 'leap', expiresAt: '2096-02-29T00:00:00Z' });
      expect(res.status).toBe(201);
      expect(res.body.expiresAt).toBe('2096-02-29T00:00:00.000Z');
    });

    it('order shipDate 2099-02-30: 400 validation_failed', async () => {
      const category = await http.post('/v1/categories', { name: 'Dates' });
      const pet = await http.post('/v1/pets', { name: 'Rex', categoryId: category.body.id });
      const res = await http.post('/v1/store/orders', {
        petId: pet.body.id,
        quantity: 1,
        shipDate: '2099-02-30T00:00:00Z',
      });
      expectErrorBody(res, 400, 'validation_failed');
    });

    it('the CLI refuses --expires-at 2099-02-30', async () => {
      const { accountId } = await createAccount(api);
      await expect(
        cli('key:create', '--account', String(accountId), '--name', 'x', '--expires-at', '2099-02-30'),
      ).rejects.toMatchObject({
        stderr: expect.stringContaining('--expires-at'),
      });
    });
  });

  describe('names', () => {
    let categoryId: number;
    beforeAll(async () => {
      categoryId = (await http.post('/v1/categories', { name: 'Names' })).body.id;
    });

    it.each(UNSAFE_NAMES)('a pet name with %s: 400 validation_failed naming the field', async (_what, name) => {
      const res = await http.post('/v1/pets', { name, categoryId });
      expectErrorBody(res, 400, 'validation_failed');
      // (NUL has its own, earlier check: "must not contain the NUL character".)
      expect(res.body.details).toEqual([{ field: 'name', message: expect.stringMatching(/must not contain/) }]);
    });

    it.each(UNSAFE_NAMES)('a category name with %s: 400', async (_what, name) => {
      expectErrorBody(await http.post('/v1/categories', { name }), 400, 'validation_failed');
    });

    it.each(UNSAFE_NAMES)('a key name with %s: 400', async (_what, name) => {
      expectErrorBody(await http.post('/v1/keys', { name }), 400, 'validation_failed');
    });

    it('renaming a pet or a category to such a name: 400', async () => {
      const pet = await http.post('/v1/pets', { name: 'Rex', categoryId });
      expectErrorBody(await http.patch(`/v1/pets/${pet.body.id}`, { name: 'Rex\u202E' }), 400, 'validation_failed');
      expectErrorBody(
        await http.patch(`/v1/categories/${categoryId}`, { name: 'Cats\u200B' }),
        400,
        'validation_failed',
      );
    });

    it('names in any script, with accents and emoji, are still accepted', async () => {
      for (const name of ['Ødön', 'ハチ公', 'رکس', 'Rex 🐶', "O'Malley-Smith"]) {
        expect((await http.post('/v1/pets', { name, categoryId })).status).toBe(201);
      }
    });

    it('the CLI refuses an account name with a bidi override', async () => {
      await expect(cli('account:create', '--name', 'evil\u202Egnp.exe', '--plan', 'free')).rejects.toMatchObject({
        stderr: expect.stringContaining('--name must not contain'),
      });
    });
  });
});
