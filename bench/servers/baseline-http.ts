// Baseline A: what node:http alone does on this core, answering a fixed JSON body.
import { createServer } from 'node:http';
import { FIXED_BODY } from './fixed-body';

const server = createServer((_req, res) => {
  const body = JSON.stringify(FIXED_BODY);
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
