import { ServerResponse } from 'node:http';
import { rawHead } from '@app/testing';
import { BLOCKS_WORK, HeaderBlock } from './header-block';

const NAMES = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'RateLimit'];

/** The head on the wire of an answer that sets X-Request-Id, then `answer`'s headers, then Content-Type. */
async function wireHead(answer: (res: ServerResponse) => void): Promise<string> {
  const { text } = await rawHead((_req, res, end) => {
    res.setHeader('X-Request-Id', 'r-1');
    answer(res);
    res.setHeader('Content-Type', 'application/json');
    end();
  });
  return text;
}

describe('HeaderBlock', () => {
  it('is written on this Node as one entry of its header table (fails if Node moves or validates that table)', () => {
    expect(BLOCKS_WORK).toBe(true);
  });

  it('gives the same bytes on the wire as one setHeader per header, in their place', async () => {
    const values = ['100', '99', '"minute";r=99;t=27'];
    const plain = await wireHead((res) => NAMES.forEach((name, i) => res.setHeader(name, values[i])));
    const block = await wireHead((res) => new HeaderBlock(NAMES).set(res, values));
    expect(block).toBe(plain);
    expect(block).toContain('X-Request-Id: r-1\r\nX-RateLimit-Limit: 100\r\nX-RateLimit-Remaining: 99\r\nRateLimit:');
  });

  it('replaces itself when set again', async () => {
    const head = await wireHead((res) => {
      const block = new HeaderBlock(NAMES);
      block.set(res, ['1', '2', '3']);
      block.set(res, ['4', '5', '6']);
    });
    expect(head).toContain('X-RateLimit-Limit: 4\r\nX-RateLimit-Remaining: 5\r\nRateLimit: 6\r\n');
    expect(head).not.toContain(': 1\r\n');
  });

  it('sets each header on a target that is not a ServerResponse, or when blocks are off', () => {
    for (const block of [new HeaderBlock(NAMES), new HeaderBlock(NAMES, false)]) {
      const set: Record<string, string> = {};
      block.set({ setHeader: (name, value) => (set[name] = value) }, ['1', '2', '3']);
      expect(set).toEqual({ 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '2', RateLimit: '3' });
    }
  });
});
