import { isNativeError } from 'node:util/types';
import { PetstoreClient, PetstoreError } from '@petstore/client';
import type { Event } from '@petstore/client';
import { generateWebhookSecret, standardWebhookHeaders } from '@app/webhooks';
import { stableSecret } from './listen-secrets';

export interface ListenOptions {
  apiKey: string;
  baseUrl: string;
  /** Unset with `printSecret`. */
  forwardTo?: string;
  types?: Event['type'][];
  json: boolean;
  /** Print the secret (after checking the key) and return. */
  printSecret?: boolean;
  /** Where the secrets are kept (configDir). */
  secretsDir: string;
}

/** Where `listen` writes: `print` its output (stdout), `warn` what goes wrong meanwhile (stderr). */
export interface ListenOutput {
  print(line: string): void;
  warn(line: string): void;
}

/** Tries to reach the API before giving up, and the waits between them (seconds). */
export const CHECK_ATTEMPTS = 5;
const CHECK_DELAYS_S = [1, 2, 4, 4];
/** Answers worth another try: the API or a proxy in front of it is busy or restarting. */
const TRANSIENT = [429, 502, 503, 504];

/** As long as a delivery may take (WEBHOOK_TIMEOUT_MS's default). */
const FORWARD_TIMEOUT_MS = 10_000;

// Whole sequences first (their parameters are printable characters): CSI, then strings (OSC, DCS, SOS, PM, APC) up to
// their terminator or the field's end, then other ESC sequences; each in its 7-bit (ESC) and 8-bit (C1) form.
const ESCAPES = new RegExp(
  [
    '(?:\\u001b\\[|\\u009b)[0-?]*[ -/]*[@-~]?',
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d-\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?',
    '\\u001b[ -/]*[0-~]?',
  ].join('|'),
  'g',
);
// What is left of C0, DEL and C1, and the Unicode line and paragraph separators.
const CONTROL_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029';
const CONTROLS = new RegExp(`[${CONTROL_CLASS}]`, 'g');

/**
 * Server text as it may be printed: no terminal control (colours, cursor moves, titles, hyperlinks) and no line break,
 * so a server cannot restyle the terminal nor forge an output line.
 */
export function printable(text: unknown): string {
  return String(text).replace(ESCAPES, '').replace(CONTROLS, '');
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
};

/** Why a request got no answer, in a few words ("connection refused"), from fetch's error and its cause. */
export function unreachableReason(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  for (const e of [cause, err]) {
    const code = (e as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && REASONS[code]) return REASONS[code];
  }
  if ((err as Error).name === 'TimeoutError') return 'timed out';
  return printable(isNativeError(cause) ? cause.message : (err as Error).message);
}

/**
 * The key's account, through GET /v1/account: a refused key (401, 403) is thrown at once with the API's message;
 * no answer (or 429, 502-504) is tried again CHECK_ATTEMPTS times, each retry said on stderr, then thrown.
 */
async function checkKey(
  client: PetstoreClient,
  baseUrl: string,
  warn: (line: string) => void,
  signal: AbortSignal,
): Promise<{ id: number; name: string }> {
  for (let attempt = 1; ; attempt++) {
    let why: string;
    try {
      const account = await client.account.get({ signal });
      if (!Number.isSafeInteger(account.id) || account.id < 1)
        throw new Error(`${baseUrl} answered GET /v1/account without an account id: is it the Pet Store API?`);
      return { id: account.id, name: printable(account.name) };
    } catch (err) {
      signal.throwIfAborted();
      if (err instanceof PetstoreError && !TRANSIENT.includes(err.status)) {
        const hint = [401, 403].includes(err.status) ? ': check --api-key (or PETSTORE_API_KEY) and --base-url' : '';
        throw new Error(`${printable(err.message)} (HTTP ${err.status} ${printable(err.code)})${hint}`);
      }
      // By name: fetch's TypeError comes from Node's realm, not the caller's when runCli runs under Jest.
      if (
        !(err instanceof PetstoreError) &&
        (err as Error).name !== 'TypeError' &&
        (err as Error).name !== 'TimeoutError'
      )
        throw err;
      why = err instanceof PetstoreError ? `HTTP ${err.status} ${printable(err.code)}` : unreachableReason(err);
    }
    if (attempt === CHECK_ATTEMPTS)
      throw new Error(`cannot reach ${baseUrl}: ${why}; gave up after ${attempt} attempts`);
    const delay = CHECK_DELAYS_S[attempt - 1];
    warn(`cannot reach ${baseUrl}: ${why}; retrying in ${delay} s (attempt ${attempt + 1} of ${CHECK_ATTEMPTS})`);
    await sleep(delay * 1000, signal);
  }
}

/**
 * `petstore listen`: checks the key (GET /v1/account), follows GET /v1/events/stream and POSTs each event to a local
 * URL as a Standard Webhooks delivery, signed with the secret this machine keeps for the account (listen-secrets.ts):
 * a receiver under development verifies it as it would a real delivery, with no public URL. `Ready!` (with the
 * secret) is printed once the stream is open, so what is committed from then on is forwarded.
 */
export async function listen(options: ListenOptions, out: ListenOutput, signal: AbortSignal): Promise<void> {
  const { print, warn } = out;
  const check = new PetstoreClient({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    maxRetries: 0,
    timeout: 10_000,
  });
  const account = await checkKey(check, options.baseUrl, warn, signal);
  const secret = stableSecret(options.secretsDir, options.baseUrl, account.id, generateWebhookSecret);
  if (options.printSecret) {
    print(options.json ? JSON.stringify({ secret, accountId: account.id }) : secret);
    return;
  }
  const forwardTo = options.forwardTo!;
  let opened = false;
  const onOpen = () => {
    if (opened) return warn(`connected again to ${options.baseUrl}`);
    opened = true;
    print(
      options.json
        ? JSON.stringify({ ready: true, secret, accountId: account.id, forwardTo })
        : `Ready! Forwarding the events of account ${account.id} (${account.name}) to ${forwardTo}, signed with ${secret} (Ctrl-C to stop)`,
    );
  };
  // The SDK reconnects by itself after a drop: each failed try is said, as above.
  const client = new PetstoreClient({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    fetch: (input, init) =>
      fetch(input, init).catch((err: unknown) => {
        if (!signal.aborted) warn(`cannot reach ${options.baseUrl}: ${unreachableReason(err)}; reconnecting`);
        throw err;
      }),
  });
  try {
    for await (const event of client.events.stream({ types: options.types, signal, onOpen })) {
      const body = JSON.stringify(event);
      const id = String(event.id);
      let status: number | null = null;
      let error: string | null = null;
      try {
        const answer = await fetch(forwardTo, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'User-Agent': 'petstore-listen/1',
            ...standardWebhookHeaders([secret], id, body),
            'Petstore-Event-Id': id,
            'Petstore-Event-Type': event.type,
          },
          body,
          redirect: 'manual',
          signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
        });
        await answer.arrayBuffer();
        status = answer.status;
      } catch (err) {
        if (signal.aborted) return;
        error = isNativeError((err as Error).cause) ? ((err as Error).cause as Error).message : (err as Error).message;
      }
      // Every field but the receiver's status may come from the server (or echo it, as an error about a header).
      const [type, shownId, shownError] = [
        printable(event.type),
        printable(id),
        error === null ? null : printable(error),
      ];
      print(
        options.json
          ? JSON.stringify({ id: typeof event.id === 'number' ? event.id : shownId, type, status, error: shownError })
          : `${new Date().toISOString()}  ${type}  ${shownId}  -> ${status ?? `failed: ${shownError}`}`,
      );
    }
  } catch (err) {
    // An error answer's message is the server's text too.
    if (isNativeError(err)) err.message = printable(err.message);
    throw err;
  }
}
