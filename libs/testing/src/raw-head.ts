import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, connect } from 'node:net';

/**
 * The head of the answer `answer` writes, as bytes on the wire (without Date), and how many entries Node's header
 * table held when the answer ended: what a client sees, whatever the table held.
 */
export async function rawHead(
  answer: (req: IncomingMessage, res: ServerResponse, end: () => void) => void,
): Promise<{ text: string; entries: number }> {
  let entries = 0;
  const server = createServer((req, res) => {
    res.sendDate = false;
    answer(req, res, () => {
      entries = res.getHeaderNames().length;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    return { text: text.slice(0, text.indexOf('\r\n\r\n')), entries };
  } finally {
    server.close();
  }
}
