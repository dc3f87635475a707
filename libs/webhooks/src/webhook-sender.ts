import { Injectable } from '@nestjs/common';
import { Agent as HttpAgent, request as httpRequest, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
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

/** A webhook's URL as checked: where its sends go, or why none may. */
export type WebhookDestination =
  { refused: string } | { request: typeof httpRequest; options: RequestOptions; host: string };

/** More of an answer than this is not read: the connection is dropped instead of kept. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Enough to read an error message, bounded per row. */
export const RESPONSE_EXCERPT_BYTES = 1024;

// The URL is checked again (DNS can change after creation) and a new connection goes to the checked address.
// Connections are kept alive per receiver (each passed the check when opened); one in use at shutdown is left alone,
// so its delivery is neither recorded nor cut short.
@Injectable()
export class WebhookSender {
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, scheduling: 'lifo' }),
    https: new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }),
  };

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
    const pinned = target.addresses[0];
    const lookup = ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) =>
      opts.all ? cb(null, [pinned]) : cb(null, pinned.address, pinned.family)) as unknown as LookupFunction;
    const { url } = target;
    const https = url.protocol === 'https:';
    // The options http.request would derive from the URL on every call (urlToHttpOptions), derived once.
    const options: RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      lookup,
      agent: https ? this.agents.https : this.agents.http,
    };
    return { request: https ? httpsRequest : httpRequest, options, host: url.host };
  }

  /** To a URL (checked first) or a destination already checked. */
  async post(to: string | WebhookDestination, headers: Record<string, string>, body: string): Promise<SendResult> {
    const destination = typeof to === 'string' ? await this.destination(to) : to;
    if ('refused' in destination)
      return { ok: false, statusCode: null, error: destination.refused, refused: true, durationMs: 0, excerpt: null };
    const { request, options, host } = destination;
    // A list skips Node's per-header setHeader and map; Node adds no Host to a list: the URL's, as Node writes it.
    const headerList = ['Host', host];
    for (const name in headers) headerList.push(name, headers[name]);
    headerList.push('Content-Length', String(Buffer.byteLength(body)));

    const started = performance.now();
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      /** Set once the status is in: a timeout then settles with it and what was read. */
      let answered: (() => void) | undefined;
      const settle = (result: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, durationMs: Math.round(performance.now() - started) });
      };
      const req = request({ ...options, headers: headerList }, (res) => {
        const status = res.statusCode ?? 0;
        const outcome =
          status >= 200 && status < 300
            ? { ok: true, statusCode: status, error: null }
            : status >= 300 && status < 400
              ? { ok: false, statusCode: status, error: 'redirect not followed' }
              : { ok: false, statusCode: status, error: `HTTP ${status}` };
        // Read to its end (within the timeout and a size cap): the connection is kept for the next
        // delivery, and its first bytes are kept for the deliveries list.
        const kept: Buffer[] = [];
        let read = 0;
        const done = () => settle({ ...outcome, excerpt: excerptOf(kept) });
        answered = done;
        res.on('data', (chunk: Buffer) => {
          if (read < RESPONSE_EXCERPT_BYTES) kept.push(chunk.subarray(0, RESPONSE_EXCERPT_BYTES - read));
          if ((read += chunk.length) > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('end', done);
        res.on('close', done);
        res.on('error', () => undefined);
      });
      // Past the timeout the status already received (if any) decides; the rest of the answer is dropped.
      const timer = setTimeout(() => {
        answered?.();
        req.destroy(new Error('timeout'));
      }, this.config.webhooks.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        settle({
          ok: false,
          statusCode: null,
          error: err.message === 'timeout' ? 'timeout' : (err.code ?? 'network error'),
          excerpt: null,
        });
      });
      req.end(body);
    });
  }
}

/** Without NUL (Postgres text refuses it); a cut character becomes U+FFFD. */
function excerptOf(chunks: Buffer[]): string {
  if (!chunks.length) return '';
  return Buffer.concat(chunks).toString('utf8').replaceAll('\0', '');
}
