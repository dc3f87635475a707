import { toPublicEvent } from './views';

describe('toPublicEvent', () => {
  const event = <T extends string | Date>(createdAt: T) => ({
    id: 1,
    accountId: 1,
    type: 'pet.created',
    resourceType: 'pet',
    resourceId: '1',
    sequence: 1,
    data: {},
    createdAt,
  });

  it.each([
    '2026-12-02T07:20:00.123456+00:00',
    '2026-12-02T07:20:00.999999+00:00',
    '2026-12-02T07:20:00.123+00:00',
    '2026-12-02T07:20:00.5+00:00',
    '2026-12-02T07:20:00+00:00',
    '2026-12-02T09:20:00.123456+02:00',
    '0099-01-01T00:00:00.123456+00:00',
  ])('spells the row_to_json timestamp %s as toISOString does', (text) => {
    expect(toPublicEvent(event(text)).createdAt).toBe(new Date(text).toISOString());
  });

  it('spells a Date as toISOString does', () => {
    const at = new Date('2026-12-02T07:20:00.123Z');
    expect(toPublicEvent(event(at)).createdAt).toBe(at.toISOString());
  });
});
