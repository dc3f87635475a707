import { Injectable } from '@nestjs/common';
import type { LookupFunction } from 'node:net';
import { Client, Dispatcher } from 'undici';
import { AppConfig } from '@app/config';
import { ResolvedTarget, resolveWebhookTarget, UnsafeWebhookUrl } from './address-guard';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** In a few words, never the URL (which may carry a token). */
  error: string | null;
  /** The SSRF guard refused the target: nothing was sent. */
  refused?: true;
  /** To the end of the answer (or the failure); 0 when nothing was sent. */
  durationMs: number;
  /** For the deliveries list; null without an answer. */
  excerpt: string | null;
}

type Pinned = ResolvedTarget['addresses'][number];

/** A webhook's URL as checked: where its sends go (the receiver's origin at the address checked), or why none may. */
export type WebhookDestination = { refused: string } | Target;
type Target = { origin: string; path: string; pinned: Pinned; key: string };

/** More of an answer than this is not read: the connection is dropped instead of kept. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Enough to read an error message, bounded per row. */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** undici's names for failures node:http reported otherwise: the attempts record the codes they always did. */
const NODE_HTTP_CODES: Record<string, string> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_OVERFLOW: 'HPE_HEADER_OVERFLOW',
};

class Timeout extends Error {}
class AnswerTooLarge extends Error {}

// The URL is checked again (DNS can change after creation) and a new connection goes to the checked address. The
// connections of an origin at one checked address are kept alive for the next delivery (each passed the check when
// opened); one in use at shutdown is left alone, so its delivery is neither recorded nor cut short.
// docs/internals/decisions/0059-webhook-deliveries-on-undici.md
@Injectable()
export class WebhookSender {
  /** undici clients (one connection each) not sending now, by origin and checked address; last in, first out. */
  private readonly idle = new Map<string, Client[]>();

  constructor(private readonly config: AppConfig) {}

  /** Checked once for a batch's deliveries: DNS included, so every send goes to an address that passed. */
  async destination(rawUrl: string): Promise<WebhookDestination> {
    let target: ResolvedTarget;
    try {
      target = await resolveWebhookTarget(rawUrl, this.config.webhooks.allowPrivateUrls);
    } catch (err) {
      if (err instanceof UnsafeWebhookUrl) return { refused: `url refused: ${err.message}` };
      throw err;
    }
    const { url } = target;
    const pinned = target.addresses[0];
    return { origin: url.origin, path: `${url.pathname}${url.search}`, pinned, key: `${url.origin} ${pinned.address}` };
  }

  /** To a URL (checked first) or a destination already checked. */
  async post(to: string | WebhookDestination, headers: Record<string, string>, body: string): Promise<SendResult> {
    const destination = typeof to === 'string' ? await this.destination(to) : to;
    if ('refused' in destination)
      return { ok: false, statusCode: null, error: destination.refused, refused: true, durationMs: 0, excerpt: null };
    const headerList: string[] = [];
    for (const name in headers) headerList.push(name, headers[name]);
    const client = this.idle.get(destination.key)?.pop() ?? this.connect(destination);
    return new Promise<SendResult>((resolve) => {
      const attempt = new Attempt(resolve, () => this.release(destination.key, client), this.config.webhooks.timeoutMs);
      client.dispatch({ path: destination.path, method: 'POST', headers: headerList, body }, attempt);
    });
  }

  // An idle client is picked rather than left to an undici Pool: a Pool counts a connection busy for a turn of the
  // event loop after its answer, and would open a second one for a delivery sent at once after the first.
  private connect({ origin, pinned, key }: Target): Client {
    // A host name's lookup answers the checked address; an address in the URL is connected to as written.
    const lookup = ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) =>
      opts.all ? cb(null, [pinned]) : cb(null, pinned.address, pinned.family)) as unknown as LookupFunction;
    const client = new Client(origin, {
      connect: { lookup, timeout: this.config.webhooks.timeoutMs },
      // HTTP/1.1 as before; the attempt's own timer bounds the whole exchange.
      allowH2: false,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const drop = () => this.drop(key, client);
    client.on('disconnect', drop).on('connectionError', drop);
    return client;
  }

  /** Once undici is done with its request: the next delivery to the destination may take it. */
  private release(key: string, client: Client): void {
    const idle = this.idle.get(key);
    if (idle) idle.push(client);
    else this.idle.set(key, [client]);
  }

  /** Its connection closed: an idle one is dropped (one sending ends with the error and is released, then dropped). */
  private drop(key: string, client: Client): void {
    const idle = this.idle.get(key);
    const i = idle ? idle.indexOf(client) : -1;
    if (i < 0) return;
    idle!.splice(i, 1);
    if (!idle!.length) this.idle.delete(key);
    void client.close();
  }
}

/** One delivery's exchange, as undici's handler: settles once, with the status if one came in. */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private controller?: Dispatcher.DispatchController;
  private settled = false;
  private timedOut = false;
  private outcome?: Pick<SendResult, 'ok' | 'statusCode' | 'error'>;
  private kept: Buffer[] = [];
  private read = 0;

  constructor(
    private readonly resolve: (result: SendResult) => void,
    /** undici is done with the request: called once, after its end or error. */
    private readonly done: () => void,
    timeoutMs: number,
  ) {
    // Past the timeout the status already received (if any) decides; the rest of the answer is dropped.
    this.timer = setTimeout(() => {
      this.timedOut = true;
      if (this.outcome) this.answered();
      else this.settle({ ok: false, statusCode: null, error: 'timeout', excerpt: null });
      this.controller?.abort(new Timeout());
    }, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Still connecting when the time ran out: nothing is sent.
    if (this.timedOut) controller.abort(new Timeout());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number): void {
    if (status < 200) return; // informational: the answer follows
    this.outcome =
      status < 300
        ? { ok: true, statusCode: status, error: null }
        : status < 400
          ? { ok: false, statusCode: status, error: 'redirect not followed' }
          : { ok: false, statusCode: status, error: `HTTP ${status}` };
  }

  // Read to its end (within the timeout and a size cap): the connection is kept for the next delivery, and its first
  // bytes are kept for the deliveries list.
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.read < RESPONSE_EXCERPT_BYTES) this.kept.push(chunk.subarray(0, RESPONSE_EXCERPT_BYTES - this.read));
    if ((this.read += chunk.length) > MAX_ANSWER_BYTES) controller.abort(new AnswerTooLarge());
  }

  onResponseEnd(): void {
    this.answered();
    this.done();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error & { code?: string }): void {
    if (this.outcome) this.answered();
    else this.settle({ ok: false, statusCode: null, error: errorOf(err), excerpt: null });
    this.done();
  }

  private answered(): void {
    this.settle({ ...this.outcome!, excerpt: excerptOf(this.kept) });
  }

  private settle(result: Omit<SendResult, 'durationMs'>): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve({ ...result, durationMs: Math.round(performance.now() - this.started) });
  }
}

/** As node:http's failures were recorded: a code, `timeout`, or `network error` without one. */
function errorOf(err: Error & { code?: string }): string {
  if (err instanceof Timeout) return 'timeout';
  return err.code === undefined ? 'network error' : (NODE_HTTP_CODES[err.code] ?? err.code);
}

/** Without NUL (Postgres text refuses it); a cut character becomes U+FFFD. */
function excerptOf(chunks: Buffer[]): string {
  if (!chunks.length) return '';
  return Buffer.concat(chunks).toString('utf8').replaceAll('\0', '');
}
