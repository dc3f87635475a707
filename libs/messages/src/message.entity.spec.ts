import * as crypto from 'node:crypto';
import { MESSAGE_ID_PATTERN, newMessageId } from './message.entity';

jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, randomBytes: jest.fn(actual.randomBytes), randomFillSync: jest.fn(actual.randomFillSync) };
});

describe('newMessageId', () => {
  it('takes the random parts of 512 ids from one fill of the CSPRNG, not a Buffer each', () => {
    const ids = Array.from({ length: 512 }, () => newMessageId(1_700_000_000_000));
    expect([crypto.randomBytes, crypto.randomFillSync].map((f) => (f as jest.Mock).mock.calls.length)).toEqual([0, 1]);
    expect(new Set(ids).size).toBe(512);
    expect(ids.every((id) => MESSAGE_ID_PATTERN.test(id))).toBe(true);
  });
});
