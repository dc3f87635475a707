import { connect, Socket } from 'node:net';

/** A hand-driven HTTP/1.1 exchange on one socket: write the request in pieces, read the raw answer. */
export class RawExchange {
  readonly socket: Socket;
  private data = '';
  readonly closed: Promise<{ response: string; at: number }>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (d: string) => (this.data += d));
    this.closed = new Promise((resolve) => {
      this.socket.on('error', () => undefined);
      this.socket.once('close', () => resolve({ response: this.data, at: Date.now() }));
    });
  }

  async connected(): Promise<this> {
    if (!this.socket.connecting) return this;
    await new Promise<void>((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    return this;
  }

  write(text: string): void {
    if (!this.socket.destroyed) this.socket.write(text);
  }

  get response(): string {
    return this.data;
  }

  /** The status line's code once one has arrived. */
  get status(): number | undefined {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(this.data);
    return m ? Number(m[1]) : undefined;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Resolves with the connection error code ('ECONNREFUSED') or 'connected'. */
export function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}
