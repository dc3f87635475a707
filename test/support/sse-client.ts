import type { PublicEvent } from '@app/events';

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
  comment?: string;
}

/**
 * A raw `text/event-stream` reader over fetch, for the e2e tests: it keeps every frame as it arrives,
 * and never reconnects by itself (the tests choose when, and with which Last-Event-ID).
 */
export class SseClient {
  readonly frames: SseFrame[] = [];
  status = 0;
  headers = new Headers();
  /** The Error body of a refused stream. */
  body: unknown;
  ended = false;
  private readonly abort = new AbortController();
  private done?: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    private readonly headerValues: Record<string, string> = {},
  ) {}

  static async open(
    baseUrl: string,
    apiKey: string,
    query = '',
    headers: Record<string, string> = {},
  ): Promise<SseClient> {
    const client = new SseClient(`${baseUrl}/v1/events/stream${query}`, apiKey, headers);
    await client.connect();
    return client;
  }

  get events(): PublicEvent[] {
    return this.frames.filter((f) => f.data !== undefined).map((f) => JSON.parse(f.data!) as PublicEvent);
  }

  /** Waits until `count` events have arrived (throws after `timeoutMs`). */
  async waitForEvents(count: number, timeoutMs = 5_000): Promise<PublicEvent[]> {
    return this.waitFor(() => this.events.length >= count, timeoutMs, `${count} events`).then(() => this.events);
  }

  async waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(`${what} not received within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }

  private async connect(): Promise<void> {
    const res = await fetch(this.url, {
      headers: { Authorization: `Bearer ${this.apiKey}`, Accept: 'text/event-stream', ...this.headerValues },
      signal: this.abort.signal,
    });
    this.status = res.status;
    this.headers = res.headers;
    if (res.status !== 200) {
      this.body = await res.json();
      this.ended = true;
      return;
    }
    this.done = this.read(res.body!).catch(() => undefined);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of body) {
        text += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          this.frames.push(parseFrame(text.slice(0, end)));
          text = text.slice(end + 2);
        }
      }
    } finally {
      this.ended = true;
    }
  }
}

function parseFrame(block: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else {
      const at = line.indexOf(':');
      const [name, value] = [line.slice(0, at), line.slice(at + 1).replace(/^ /, '')];
      if (name === 'id') frame.id = value;
      else if (name === 'event') frame.event = value;
      else if (name === 'data') frame.data = value;
      else if (name === 'retry') frame.retry = Number(value);
    }
  }
  return frame;
}
