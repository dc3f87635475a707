import { Client, ClientConfig } from 'pg';
import type { DatabaseHost } from '@app/config';

/**
 * No server of DATABASE_URL takes writes now (a failover under way). SQLSTATE 08001, as libpq's
 * target_session_attrs=read-write reports it: a connection failure, answered 503 with Retry-After.
 */
export class NoPrimaryError extends Error {
  readonly code = '08001';
  constructor(hosts: DatabaseHost[]) {
    super(`no server takes writes among ${hosts.map((h) => `${h.host}:${h.port}`).join(',')} (DATABASE_URL)`);
  }
}

/** After finding none, connections fail at once for this long rather than ask every server again. */
const NONE_FOR_MS = 250;

/**
 * Which of DATABASE_URL's servers takes writes now: libpq's `target_session_attrs=read-write`, which
 * node-postgres lacks. One per DATABASE_URL in a process, shared by its pool, probes and migrations.
 * The answer is remembered until a connection to that server fails or finds it read-only; then the
 * next connection asks every server (`SHOW transaction_read_only`, as libpq does), all at once.
 */
export class PrimaryLocator {
  private static readonly all = new Map<string, PrimaryLocator>();
  private known?: DatabaseHost;
  private asking?: Promise<DatabaseHost>;
  private noneUntil = 0;

  /** A pg Client class for a Pool (`Client` option) that connects to the server taking writes now. */
  readonly Client: typeof Client;

  private constructor(
    readonly hosts: DatabaseHost[],
    private readonly base: ClientConfig,
  ) {
    const connectTo = (client: Client, connect: () => Promise<unknown>) => this.connect(client, connect);
    this.Client = class PrimaryClient extends Client {
      override connect(): Promise<Client>;
      override connect(callback: (err: Error | null, client?: Client) => void): void;
      override connect(callback?: (err: Error | null, client?: Client) => void): Promise<Client> | void {
        const connected = connectTo(this, () => super.connect()).then(() => this);
        if (!callback) return connected;
        connected.then((client) => callback(null, client), callback);
      }
    };
  }

  /** `url`: DATABASE_URL's first server as one URL (config.databaseUrl), whose user, database and options apply to every server. */
  static for(url: string, hosts: DatabaseHost[], options: ClientConfig = {}): PrimaryLocator {
    const key = `${url} ${hosts.map((h) => `${h.host}:${h.port}`).join(',')}`;
    let locator = PrimaryLocator.all.get(key);
    if (!locator) {
      locator = new PrimaryLocator(hosts, { connectionTimeoutMillis: 2_000, ...options, connectionString: url });
      PrimaryLocator.all.set(key, locator);
    }
    return locator;
  }

  /** The server taking writes now, asking them when it is not known. */
  async primary(): Promise<DatabaseHost> {
    if (this.known) return this.known;
    if (Date.now() < this.noneUntil) throw new NoPrimaryError(this.hosts);
    this.asking ??= this.ask().finally(() => (this.asking = undefined));
    return this.asking;
  }

  /** A connection to `host` failed or found it read-only: the next one asks again. */
  forget(host: DatabaseHost): void {
    if (this.known === host) this.known = undefined;
  }

  private async connect(client: Client, connect: () => Promise<unknown>): Promise<void> {
    const target = await this.primary();
    aim(client, target);
    try {
      await connect();
      const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
      if (rows[0]?.transaction_read_only === 'off') return;
    } catch (err) {
      this.forget(target);
      throw err;
    }
    // Demoted since we asked (a switchover): this server is a standby now.
    this.forget(target);
    await client.end().catch(() => undefined);
    throw new NoPrimaryError(this.hosts);
  }

  private async ask(): Promise<DatabaseHost> {
    const answers = await Promise.all(this.hosts.map((host) => this.readWrite(host)));
    const found = this.hosts.find((_, i) => answers[i]);
    if (!found) {
      this.noneUntil = Date.now() + NONE_FOR_MS;
      throw new NoPrimaryError(this.hosts);
    }
    this.known = found;
    return found;
  }

  private async readWrite(host: DatabaseHost): Promise<boolean> {
    const client = aim(new Client(this.base), host);
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
      return rows[0]?.transaction_read_only === 'off';
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/**
 * pg.Client connects to its `host` and `port` fields, read when connect() is called (the connection
 * string, parsed in the constructor, would override options given beside it).
 */
function aim(client: Client, to: DatabaseHost): Client {
  return Object.assign(client, { host: to.host, port: to.port });
}
