import { createServer, Server } from 'node:net';
import { listenOn, requirePortsFree } from './start-up';

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

describe('listenOn', () => {
  it('listens on the address given (BIND_ADDRESS), and names it when it cannot', async () => {
    const server = createServer();
    await listenOn(server, 'PORT', 0, '127.0.0.1');
    try {
      expect((server.address() as { address: string }).address).toBe('127.0.0.1');
    } finally {
      await closed(server);
    }
    // TEST-NET-3: an address no interface here has.
    await expect(listenOn(createServer(), 'PORT', 0, '203.0.113.1')).rejects.toThrow(
      /^cannot listen on PORT 0 at 203\.0\.113\.1 \(BIND_ADDRESS\): .*EADDRNOTAVAIL/,
    );
  });
});
