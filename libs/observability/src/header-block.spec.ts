import { createServer, ServerResponse } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { BLOCKS_WORK, HeaderBlock } from './header-block';

const NAMES = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'RateLimit'];

/** The raw head of the answer `answer` writes (Date left out). */
async function rawHead(answer: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => {
    res.sendDate = false;
    res.setHeader('X-Request-Id', 'r-1');
    answer(res);
    res.setHeader('Content-Type', 'application/json');
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    return text.slice(0, text.indexOf('\r\n\r\n'));
  } finally {
    server.close();
  }
}

describe('HeaderBlock', () => {
  it('is written on this Node as one entry of its header table (fails if Node moves or validates that table)', () => {
    expect(BLOCKS_WORK).toBe(true);
  });

  it('gives the same bytes on the wire as one setHeader per header, in their place', async () => {
    const values = ['100', '99', '"minute";r=99;t=27'];
    const plain = await rawHead((res) => NAMES.forEach((name, i) => res.setHeader(name, values[i])));
    const block = await rawHead((res) => new HeaderBlock(NAMES).set(res, values));
    expect(block).toBe(plain);
    expect(block).toContain('X-Request-Id: r-1\r\nX-RateLimit-Limit: 100\r\nX-RateLimit-Remaining: 99\r\nRateLimit:');
  });

  it('replaces itself when set again', async () => {
    const head = await rawHead((res) => {
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
