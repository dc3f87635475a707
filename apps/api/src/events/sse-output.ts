import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ErrorBody } from '@app/errors';
import type { PublicEvent, StreamEnd, StreamOutput } from '@app/events';

/** How soon the client comes back after the server ends its stream: at once after a shutdown (another replica). */
const RETRY_MS: Record<StreamEnd, number> = { shutdown: 500, behind: 1_000, lost: 3_000, key: 5_000 };

/** The `text/event-stream` framing of an event stream (WHATWG HTML, server-sent events). */
export class SseOutput implements StreamOutput {
  private readonly res: ServerResponse;

  constructor(private readonly reply: FastifyReply) {
    this.res = reply.raw;
  }

  /** After validation, so a refusal is still an Error body. From here the stream is written to Node's response. */
  begin(): void {
    this.reply.hijack();
    this.res.writeHead(200, {
      ...(this.reply.getHeaders() as OutgoingHttpHeaders),
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // nginx would otherwise hold the events in its buffer.
      'X-Accel-Buffering': 'no',
    });
    this.res.write(`retry: ${RETRY_MS.behind}\n\n`);
  }

  write(event: PublicEvent): boolean {
    return this.res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  position(id: number): void {
    this.res.write(`id: ${id}\n\n`);
  }

  heartbeat(): void {
    this.res.write(': heartbeat\n\n');
  }

  end(why: StreamEnd, error?: ErrorBody): void {
    const last = error ? `event: error\ndata: ${JSON.stringify(error)}\n\n` : '';
    this.res.end(`${last}: ${why}\nretry: ${RETRY_MS[why]}\n\n`);
  }
}
