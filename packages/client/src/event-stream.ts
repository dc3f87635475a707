import type { Event } from './schema';
import type { WebAbortSignal, WebReadableStream } from './web-types';

export interface EventStreamOptions {
  /** Only events of these types (all the key may see when unset). */
  types?: Event['type'][];
  /** Resume after this event id (the last one you processed); unset: events from now on. */
  after?: number;
  /** Ends the iteration (the loop then throws the signal's reason). */
  signal?: WebAbortSignal;
  /**
   * Called each time the server answers a connection with 200 (the first one and every reconnect), before any of its
   * events: the key was accepted and events committed from then on will come. `listen` prints `Ready!` on the first.
   */
  onOpen?: () => void;
}

/** One `text/event-stream` frame: its `id`, `event`, `data` and `retry` fields (comments are dropped). */
export interface StreamFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

/** The frames of a `text/event-stream` body, as the WHATWG HTML parser reads them (LF, CRLF or CR line ends). */
export async function* streamFrames(body: WebReadableStream): AsyncGenerator<StreamFrame, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let frame: StreamFrame = {};
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      // A CR at the very end may be the first half of a CRLF: it waits for the next chunk.
      const cut = buffer.endsWith('\r') ? buffer.length - 1 : buffer.length;
      const lines = buffer.slice(0, cut).split(/\r\n|\r|\n/);
      buffer = lines.pop()! + buffer.slice(cut);
      for (const line of lines) {
        if (line === '') {
          if (data.length) frame.data = data.join('\n');
          if (Object.keys(frame).length) yield frame;
          frame = {};
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'data') data.push(value);
        else if (name === 'id' && !value.includes('\0')) frame.id = value;
        else if (name === 'event') frame.event = value;
        else if (name === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
