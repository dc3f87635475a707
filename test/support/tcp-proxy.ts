import { AddressInfo, createServer, Server, Socket, connect } from 'node:net';

/**
 * A TCP proxy in front of the local Postgres or Redis, so a test can take a backing service
 * "down" for the app under test (drop every connection, refuse new ones) and bring it back,
 * without stopping the real server other tests use.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  /** A distant server: what it sends (its replies, then its closing) reaches the client this much later. */
  replyDelayMs = 0;
  /**
   * A silent partition: connections stay open, but no byte gets through either way (they are
   * dropped) and nothing is closed or reset; closes still pass.
   */
  silent = false;
  /** Sees what the clients send, for a test that must act at a given step of a protocol. */
  onClientData?: (chunk: Buffer) => void;

  private constructor(private readonly target: URL) {}

  /** A started proxy in front of the service at `serviceUrl` (postgres:// or redis://). */
  static inFrontOf(serviceUrl: string): Promise<TcpProxy> {
    return new TcpProxy(new URL(serviceUrl)).start();
  }

  async start(port = this.port): Promise<this> {
    // Half-open sockets, as on a real link: the server still answers a client that is closing.
    this.server = createServer({ allowHalfOpen: true }, (client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      const later = (fn: () => void) => (this.replyDelayMs ? setTimeout(fn, this.replyDelayMs) : fn());
      client.on('data', (chunk: Buffer) => {
        this.onClientData?.(chunk);
        if (!this.silent) upstream.write(chunk);
      });
      client.on('end', () => upstream.end());
      upstream.on('data', (chunk: Buffer) => this.silent || later(() => client.write(chunk)));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => later(() => client.destroy()));
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(port, '127.0.0.1', resolve);
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** The outage: existing connections are cut and the port refuses new ones. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    this.server = undefined;
  }

  /** The recovery, on the same port. */
  restart(): Promise<this> {
    return this.start(this.port);
  }

  /** The service's URL through this proxy, for the app under test. */
  get url(): string {
    const u = new URL(this.target);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }
}
