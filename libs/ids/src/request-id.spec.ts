import * as crypto from 'node:crypto';
import { newRequestId } from './request-id';

jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, randomFillSync: jest.fn(actual.randomFillSync) };
});
const fill = crypto.randomFillSync as unknown as jest.Mock;

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newRequestId', () => {
  it('gives version 4 UUIDs as randomUUID does, all different, across refills of its pool', () => {
    const ids = Array.from({ length: 1_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
    expect(crypto.randomUUID()).toMatch(UUID_V4);
  });

  it('fills its random bytes once per 256 ids', () => {
    fill.mockClear();
    for (let i = 0; i < 512; i++) newRequestId();
    expect(fill).toHaveBeenCalledTimes(2);
  });

  it('sets the version and variant bits whatever the random bytes', () => {
    /** The first id made from a refill of `byte`s. */
    const afterFill = (byte: number) => {
      fill.mockClear();
      fill.mockImplementationOnce((buf: Buffer) => buf.fill(byte));
      let id = newRequestId();
      while (!fill.mock.calls.length) id = newRequestId();
      return id;
    };
    expect(afterFill(0xff)).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(afterFill(0)).toBe('00000000-0000-4000-8000-000000000000');
  });
});
