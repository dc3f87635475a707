import { createServer, Server } from 'node:net';
import { requirePortsFree } from './start-up';

const listening = async (port = 0): Promise<Server> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return server;
};
const portOf = (server: Server) => (server.address() as { port: number }).port;
const closed = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('requirePortsFree', () => {
  it('rejects with one line naming the variable and the port another process holds', async () => {
    const held = await listening();
    try {
      await expect(requirePortsFree({ PORT: 0, WORKER_PORT: portOf(held) })).rejects.toThrow(
        new RegExp(`^cannot listen on WORKER_PORT ${portOf(held)}: .*EADDRINUSE`),
      );
    } finally {
      await closed(held);
    }
  });

  it('leaves a free port free for the real listen that follows', async () => {
    const probe = await listening();
    const port = portOf(probe);
    await closed(probe);
    await requirePortsFree({ PORT: port });
    await closed(await listening(port));
  });
});
