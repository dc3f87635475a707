import { randomUUID } from 'node:crypto';
import { HttpClient } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';
import { RunningApi, startApiWithAccount } from '../../support/test-apps';

/**
 * Issue 63.1: what a property-based fuzzer found driving the document. Valid RFC 3339 date-times are taken in full, a
 * missing field says `required`, an empty If-Match matches nothing and GET /usage says which rule its range broke.
 */
describe('the contract under a fuzzer', () => {
  let api: RunningApi;
  let http: HttpClient;
  let petId: number;
  let categoryId: number;

  beforeAll(async () => {
    ({ api, http } = await startApiWithAccount());
    const category = await http.post('/v1/categories', { name: `fuzz-${randomUUID()}` });
    categoryId = category.body.id;
    petId = (await http.post('/v1/pets', { name: 'Rex', categoryId })).body.id;
    expect((await http.put(`/v1/store/inventory/${petId}`, { quantity: 100 })).status).toBe(200);
  });
  afterAll(() => api.close());

  describe('date-time inputs take every RFC 3339 date-time', () => {
    it.each([
      ['0099-12-31T23:59:59Z', '0099-12-31T23:59:59.000Z'],
      ['0001-01-01t00:00:00z', '0001-01-01T00:00:00.000Z'],
      // Year 0 is a leap year (1900 is not).
      ['0000-02-29T12:00:00Z', '0000-02-29T12:00:00.000Z'],
      ['2099-12-31t23:59:59.123456+02:00', '2099-12-31T21:59:59.123Z'],
      ['2098-12-31T23:59:60Z', '2099-01-01T00:00:00.000Z'],
    ])('an order ships on %s', async (shipDate, stored) => {
      const res = await http.post('/v1/store/orders', { petId, quantity: 1, shipDate });
      expect([res.status, res.body.shipDate]).toEqual([201, stored]);
      expect((await http.get(`/v1/store/orders/${res.body.id}`)).body.shipDate).toBe(stored);
    });

    it('an API key expires at a lowercase date-time; one in the past is refused by its rule, not as a format', async () => {
      const ok = await http.post('/v1/keys', { name: 'lower', expiresAt: '2099-12-31t23:59:59z' });
      expect([ok.status, ok.body.expiresAt]).toEqual([201, '2099-12-31T23:59:59.000Z']);
      const past = await http.post('/v1/keys', { name: 'past', expiresAt: '0099-12-31T23:59:59Z' });
      expectErrorBody(past, 400, 'validation_failed');
      expect(past.body.details).toEqual([{ field: 'expiresAt', message: 'must be in the future' }]);
      expect(past.body.message).not.toMatch(/ISO 8601/);
    });

    it('refuses an instant that cannot be written back in years 0000-9999, naming the field and the rule', async () => {
      const res = await http.post('/v1/store/orders', { petId, shipDate: '9999-12-31T23:59:59-00:01' });
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([
        { field: 'shipDate', message: 'must be an instant from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z' },
      ]);
    });

    it('says what a date-time is when the value is not one', async () => {
      const res = await http.post('/v1/store/orders', { petId, shipDate: '2099-02-30T00:00:00Z' });
      expect(res.body.details).toEqual([{ field: 'shipDate', message: 'must name a date and time that exist' }]);
      const text = await http.post('/v1/store/orders', { petId, shipDate: 'tomorrow' });
      expect(text.body.details).toEqual([
        { field: 'shipDate', message: expect.stringMatching(/^must be an RFC 3339 date-time/) },
      ]);
      expect(text.body.message).not.toMatch(/ISO 8601/);
    });

    it('GET /usage takes lowercase date-times; a webhook recovers since year 99', async () => {
      const at = (ms: number) => new Date(ms).toISOString().toLowerCase();
      const now = Date.now();
      const usage = await http.get(`/v1/usage?granularity=minute&from=${at(now - 600_000)}&to=${at(now)}`);
      expect(usage.status).toBe(200);
      const hook = await http.post('/v1/webhooks', { url: 'https://93.184.216.34/fuzz', events: ['webhook.disabled'] });
      const recovered = await http.post(`/v1/webhooks/${hook.body.id}/recover`, { since: '0099-12-31t23:59:59z' });
      expect(recovered.status).toBe(202);
    });
  });

  describe('GET /usage names the field and the rule its range broke', () => {
    it('from before to', async () => {
      const res = await http.get('/v1/usage?from=2099-01-02T00:00:00Z&to=2099-01-01T00:00:00Z');
      expectErrorBody(res, 422, 'invalid_range');
      expect(res.body.details).toEqual([{ field: 'query.from', message: 'must be before `to`' }]);
      expect(res.body.message).toBe('from: must be before `to`');
    });

    it('at most 1,500 buckets, saying how many the range holds', async () => {
      const res = await http.get('/v1/usage?granularity=hour&from=2000-01-01T00:00:00Z&to=2000-03-05T00:00:00Z');
      expectErrorBody(res, 422, 'invalid_range');
      const message =
        'the range from `from` to `to` must hold at most 1,500 buckets of the granularity (hour); it holds 1,536';
      expect(res.body.details).toEqual([{ field: 'query.from', message }]);
      expect(res.body.message).toBe(`from: ${message}`);
    });

    it('the document states both rules and a true 422', async () => {
      const doc = (await new HttpClient(api.url).get('/openapi.json')).body;
      const op = doc.paths['/usage'].get;
      expect(op.responses['422'].description).not.toMatch(/Idempotency/);
      expect(op.responses['422'].description).toMatch(/invalid_range/);
      expect(op.responses['422'].content['application/json'].example.code).toBe('invalid_range');
      const from = op.parameters.find((p: { name: string }) => p.name === 'from');
      expect(from.description).toMatch(/before `to`/);
      expect(from.description).toMatch(/1,500 buckets/);
    });
  });

  it('a required field left out is one detail, `required`', async () => {
    const res = await http.post('/v1/pets', { name: 'Rex' });
    expectErrorBody(res, 400, 'validation_failed');
    expect(res.body.details).toEqual([{ field: 'categoryId', message: 'required' }]);
    expect(res.body.message).toBe('categoryId: required');
    const order = await http.post('/v1/store/orders', {});
    expect(order.body.details).toEqual([{ field: 'petId', message: 'required' }]);
  });

  describe('an empty If-Match is a list that matches nothing (RFC 9110 13.1.1)', () => {
    it.each(['', '   '])('answers 412 to If-Match %j on PATCH, PUT and DELETE', async (ifMatch) => {
      const headers = { 'If-Match': ifMatch };
      const category = await http.patch(
        `/v1/categories/${categoryId}`,
        { name: `renamed-${randomUUID()}` },
        { headers },
      );
      expectErrorBody(category, 412, 'precondition_failed');
      expectErrorBody(
        await http.put(`/v1/store/inventory/${petId}`, { quantity: 5 }, { headers }),
        412,
        'precondition_failed',
      );
      expectErrorBody(await http.delete(`/v1/pets/${petId}`, { headers }), 412, 'precondition_failed');
    });

    it('still writes without If-Match', async () => {
      expect((await http.put(`/v1/store/inventory/${petId}`, { quantity: 100 })).status).toBe(200);
    });
  });
});
