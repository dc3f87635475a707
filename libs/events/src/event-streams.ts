import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { ApiError } from '@app/errors';
import { EventFilter, EventsService, passes } from './events.service';
import { LiveEvents, LiveSink } from './live-events';
import { StreamSlots } from './stream-slots';
import type { PublicEvent } from './views';

/** Live events held for one client whose socket is full; beyond it the stream ends and the client resumes. */
export const STREAM_BUFFER_EVENTS = 1_000;
const BACKLOG_PAGE = 500;

/** Why the server ends a stream: each answer ends with a `retry:` hint and the client resumes from its last id. */
export type StreamEnd = 'behind' | 'lost' | 'shutdown';

export interface StreamOutput {
  /** False when the client's socket is full: nothing more is written until `drained()`. */
  write(event: PublicEvent): boolean;
  /** An id without an event: where a client that reconnects resumes from, before any event came. */
  position(id: number): void;
  heartbeat(): void;
  end(why: StreamEnd): void;
}

export interface StreamRequest {
  accountId: number;
  keyId: number;
  /** Streams the key may hold open at once, across replicas. */
  cap: number;
  filter: EventFilter;
  /** Resume after this id: the events since are read from the table first. Unset: live events only. */
  after?: number;
}

const openStreams = new Gauge({ name: 'petstore_event_streams_open', help: 'Event streams open on this process' });

/**
 * One client's stream: subscribed to live events before the backlog is read, so nothing committed in between is
 * missed; the live events heard meanwhile are held, and those the backlog already had are dropped at the seam.
 */
export class EventStream implements LiveSink {
  private pending: PublicEvent[] = [];
  private live = false;
  private writable = true;
  private ended = false;
  private resume?: () => void;
  unsubscribe = () => {};

  constructor(
    private readonly out: StreamOutput,
    private readonly filter: EventFilter,
    private lastId: number | undefined,
    /** Sent first as the client's position, when the client named none. */
    private readonly announce: boolean,
    private readonly backlog: (after: number) => Promise<PublicEvent[]>,
    private readonly onEnd: (stream: EventStream) => void,
  ) {}

  deliver(event: PublicEvent, adminOnly: boolean): void {
    if (this.ended || !passes(this.filter, event.type, adminOnly)) return;
    if (this.pending.length >= STREAM_BUFFER_EVENTS) return this.end('behind');
    this.pending.push(event);
    if (this.live) this.pump();
  }

  lost(): void {
    this.end('lost');
  }

  drained(): void {
    this.writable = true;
    this.resume?.();
    if (this.live) this.pump();
  }

  heartbeat(): void {
    if (this.writable && !this.ended) this.out.heartbeat();
  }

  /** Sends the backlog after the last id (the position first, when the client named none), then goes live. */
  async start(): Promise<void> {
    if (this.lastId !== undefined) {
      if (this.announce) this.out.position(this.lastId);
      for (let full = true; full && !this.ended;) {
        const page = await this.backlog(this.lastId);
        for (const event of page) if (!this.ended) await this.send(event);
        full = page.length === BACKLOG_PAGE;
      }
      const seen = this.lastId;
      this.pending = this.pending.filter((event) => event.id > seen);
    }
    this.live = true;
    this.pump();
  }

  /** `why` unset: the client went away, nothing is written. */
  end(why?: StreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = [];
    this.resume?.();
    this.onEnd(this);
    if (why) this.out.end(why);
  }

  private async send(event: PublicEvent): Promise<void> {
    this.lastId = event.id;
    if (this.out.write(event)) return;
    this.writable = false;
    await new Promise<void>((resolve) => (this.resume = resolve));
    this.resume = undefined;
  }

  private pump(): void {
    while (this.writable && this.pending.length && !this.ended) {
      const event = this.pending.shift()!;
      this.lastId = event.id;
      this.writable = this.out.write(event);
    }
  }
}

/** The open streams of this process: slots per key, one heartbeat timer for all, and their end at shutdown. */
@Injectable()
export class EventStreams implements OnApplicationShutdown {
  private readonly logger = new Logger(EventStreams.name);
  private readonly streams = new Map<EventStream, { keyId: number; slot: string; cap: number }>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly events: EventsService,
    private readonly live: LiveEvents,
    private readonly slots: StreamSlots,
    private readonly config: AppConfig,
  ) {}

  /** 429 beyond the key's cap, 503 without Redis; then `start()` the stream once the answer's headers are out. */
  async open(req: StreamRequest, out: StreamOutput): Promise<EventStream> {
    const slot = randomUUID();
    const taken = await this.slots.take(req.keyId, slot, req.cap, this.leaseMs).catch(() => {
      const retry = { 'Retry-After': '5' };
      throw new ApiError('service_unavailable', 'Event streams are unavailable right now; try again later', [], retry);
    });
    if (!taken)
      throw new ApiError(
        'rate_limit_exceeded',
        `This API key has ${req.cap} event streams open, its plan's limit: close one first`,
        [{ field: 'streams', message: `limit ${req.cap} open streams per API key` }],
        { 'Retry-After': String(Math.ceil(this.config.eventStreamHeartbeatMs / 1000)) },
      );
    const backlog = (after: number) => this.events.backlog(req.accountId, after, req.filter, BACKLOG_PAGE);
    let stream: EventStream;
    try {
      // Read before subscribing: what commits in between is in the backlog after it.
      const after = req.after ?? (await this.events.latestId(req.accountId));
      stream = new EventStream(out, req.filter, after, req.after === undefined, backlog, (s) => this.forget(s));
      stream.unsubscribe = await this.live.subscribe(req.accountId, stream);
    } catch (err) {
      await this.slots.release(req.keyId, slot).catch(() => undefined);
      throw err;
    }
    this.streams.set(stream, { keyId: req.keyId, slot, cap: req.cap });
    openStreams.inc();
    this.timer ??= setInterval(() => this.beat(), this.config.eventStreamHeartbeatMs);
    return stream;
  }

  onApplicationShutdown(): void {
    for (const stream of [...this.streams.keys()]) stream.end('shutdown');
  }

  // A lease outlives two missed heartbeats.
  private get leaseMs(): number {
    return 3 * this.config.eventStreamHeartbeatMs;
  }

  private beat(): void {
    void this.live.probe();
    for (const [stream, { keyId, slot, cap }] of this.streams) {
      stream.heartbeat();
      this.slots.take(keyId, slot, cap, this.leaseMs).catch((err: Error) => {
        this.logger.warn({ err: { message: err.message } }, 'event stream slot not renewed');
      });
    }
  }

  private forget(stream: EventStream): void {
    stream.unsubscribe();
    const held = this.streams.get(stream);
    if (!held) return;
    this.streams.delete(stream);
    openStreams.dec();
    void this.slots.release(held.keyId, held.slot).catch(() => undefined);
    if (!this.streams.size) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
