// The floor: node:http alone making the hot routes' own I/O (same-io.ts, exactly baseline C's), with the least
// HTTP work a JSON API can do around it: match the path, read and parse the POST's JSON body, stringify the
// answer with its Content-Type and Content-Length. What any framework adds is the distance to it.
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { acceptMessage, getPet, listPets } from './same-io';

function answer(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function reply(res: ServerResponse, status: number, work: Promise<unknown>): void {
  work.then(
    (value) => answer(res, status, value),
    (err: Error) => answer(res, 500, { message: err.message }),
  );
}

function jsonBody(req: IncomingMessage): Promise<{ message: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message: string });
      } catch (err) {
        reject(err as Error);
      }
    });
    req.on('error', reject);
  });
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (req.method === 'GET' && path.startsWith('/pets/')) return reply(res, 200, getPet(path.slice('/pets/'.length)));
  if (req.method === 'GET' && path === '/pets') {
    const limit = new URLSearchParams(q < 0 ? '' : url.slice(q + 1)).get('limit');
    return reply(res, 200, listPets(Number(limit ?? 20)));
  }
  if (req.method === 'POST' && path === '/messages')
    return reply(
      res,
      202,
      jsonBody(req).then((body) => acceptMessage(body.message)),
    );
  if (req.method === 'GET' && path === '/ready') return answer(res, 200, { ok: true });
  answer(res, 404, { message: 'not found' });
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
