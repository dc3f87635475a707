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

  it('writes the time as toString(16) padded to 12 digits, and the random bytes as hex', () => {
    const times = [0, 1, 0xffffffff, 0x100000000, 1_700_000_000_000, 1_795_776_960_123, 2 ** 48 - 1];
    for (const now of times) expect(newMessageId(now).slice(4, 16)).toBe(now.toString(16).padStart(12, '0'));
    (crypto.randomFillSync as unknown as jest.Mock).mockImplementationOnce((buf: Buffer) => buf.fill(0xa5));
    let id = newMessageId(1);
    for (let i = 0; i < 512 && !id.endsWith('a5a5a5a5a5a5a5a5'); i++) id = newMessageId(1);
    expect(id).toBe('msg_000000000001a5a5a5a5a5a5a5a5');
  });
});
