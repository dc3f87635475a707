import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { ApiError, ErrorBody } from '@app/errors';
import { LeasedSlots } from '@app/redis';
import { EventFilter, EventsService, passes } from './events.service';
import { LiveEvents, LiveSink } from './live-events';
import type { PublicEvent } from './views';

/** Live events held for one client whose socket is full; beyond it the stream ends and the client resumes. */
export const STREAM_BUFFER_EVENTS = 1_000;
const BACKLOG_PAGE = 500;

/**
 * Why the server ends a stream: each answer ends with a `retry:` hint and the client resumes from its last id; `key`:
 * the key stopped working (revoked, expired, its rotation's grace over), told in an error frame first.
 */
export type StreamEnd = 'behind' | 'lost' | 'shutdown' | 'key';

export interface StreamOutput {
  /** False when the client's socket is full: nothing more is written until `drained()`. */
  write(event: PublicEvent): boolean;
  /** An id without an event: where a client that reconnects resumes from, before any event came. */
  position(id: number): void;
  heartbeat(): void;
  /** `error`: the Error body sent as the stream's last event. */
  end(why: StreamEnd, error?: ErrorBody): void;
}

/** Where a stream's key stands when asked again: working until `validUntil` (ms; unset: no end), or refused now. */
export type KeyStanding = { validUntil?: number } | { refused: ApiError };

export interface StreamRequest {
  accountId: number;
  keyId: number;
  /** Streams the key, and its whole account, may hold open at once, across replicas. */
  caps: { key: number; account: number };
  filter: EventFilter;
  /** Resume after this id: the events since are read from the table first. Unset: live events only. */
  after?: number;
  /** When the key stops working by itself (expiry, a rotation's grace), in ms; unset: never. */
  keyValidUntil?: number;
  /** Asked when the key or its account changed, and when `keyValidUntil` comes. */
  recheckKey(): Promise<KeyStanding>;
}

/** A change to keys that streams must answer: a key, an account's keys, or (neither) every key. */
export interface KeyChange {
  accountId?: number;
  keyId?: number;
}

interface Held {
  req: StreamRequest;
  slot: string;
  deadline?: NodeJS.Timeout;
}

// setTimeout's longest delay; a later end is armed again when it fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  end(why?: StreamEnd, error?: ErrorBody): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = [];
    this.resume?.();
    this.onEnd(this);
    if (why) this.out.end(why, error);
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

/**
 * The open streams of this process: slots per key and per account, one heartbeat timer for all, their end when their
 * key stops working, and at shutdown.
 */
@Injectable()
export class EventStreams implements OnApplicationShutdown {
  private readonly logger = new Logger(EventStreams.name);
  private readonly streams = new Map<EventStream, Held>();
  private timer?: NodeJS.Timeout;
  // Counts rechecks: a key changed while its stream was opening is asked again once the stream is held.
  private changes = 0;

  constructor(
    private readonly events: EventsService,
    private readonly live: LiveEvents,
    private readonly slots: LeasedSlots,
    private readonly config: AppConfig,
  ) {}

  /** 429 beyond the key's or the account's cap, 503 without Redis; then `start()` once the answer's headers are out. */
  async open(req: StreamRequest, out: StreamOutput): Promise<EventStream> {
    const changesBefore = this.changes;
    const slot = randomUUID();
    const full = await this.take(req, slot).catch(() => {
      const retry = { 'Retry-After': '5' };
      throw new ApiError('service_unavailable', 'Event streams are unavailable right now; try again later', [], retry);
    });
    if (full !== -1) {
      const [cap, of] = full === 0 ? [req.caps.account, 'account'] : [req.caps.key, 'API key'];
      throw new ApiError(
        'rate_limit_exceeded',
        `This ${of} has ${cap} event streams open, its plan's limit: close one first`,
        [{ field: 'streams', message: `limit ${cap} open streams per ${of}` }],
        { 'Retry-After': String(Math.ceil(this.config.eventStreamHeartbeatMs / 1000)) },
      );
    }
    const backlog = (after: number) => this.events.backlog(req.accountId, after, req.filter, BACKLOG_PAGE);
    let stream: EventStream;
    try {
      // Read before subscribing: what commits in between is in the backlog after it.
      const after = req.after ?? (await this.events.latestId(req.accountId));
      stream = new EventStream(out, req.filter, after, req.after === undefined, backlog, (s) => this.forget(s));
      stream.unsubscribe = await this.live.subscribe(req.accountId, stream);
    } catch (err) {
      await this.slots.release(this.setsOf(req), slot).catch(() => undefined);
      throw err;
    }
    const held: Held = { req, slot };
    this.streams.set(stream, held);
    this.arm(held, req.keyValidUntil);
    openStreams.inc();
    this.timer ??= setInterval(() => this.beat(), this.config.eventStreamHeartbeatMs);
    if (this.changes !== changesBefore) void this.recheck({ keyId: req.keyId });
    return stream;
  }

  /**
   * Asks each affected key where it stands (once per key): a key no longer working ends its streams with an error
   * frame and frees its slots; one working has its end armed again (a rotation sets one).
   */
  async recheck(change: KeyChange): Promise<void> {
    this.changes++;
    const byKey = new Map<number, { req: StreamRequest; streams: EventStream[] }>();
    for (const [stream, { req }] of this.streams) {
      const affected =
        (change.keyId === undefined && change.accountId === undefined) ||
        req.keyId === change.keyId ||
        (change.keyId === undefined && req.accountId === change.accountId);
      if (!affected) continue;
      const key = byKey.get(req.keyId);
      if (key) key.streams.push(stream);
      else byKey.set(req.keyId, { req, streams: [stream] });
    }
    await Promise.all([...byKey.values()].map(({ req, streams }) => this.recheckKey(req, streams)));
  }

  onApplicationShutdown(): void {
    for (const stream of [...this.streams.keys()]) stream.end('shutdown');
  }

  private async recheckKey(req: StreamRequest, streams: EventStream[]): Promise<void> {
    let standing: KeyStanding;
    try {
      standing = await req.recheckKey();
    } catch (err) {
      // Unknown standing: the client resumes and its key is checked again at the door.
      this.logger.warn({ err: { message: (err as Error).message } }, 'event stream key not rechecked: stream ended');
      for (const stream of streams) stream.end('lost');
      return;
    }
    if ('refused' in standing) {
      for (const stream of streams) stream.end('key', standing.refused.toBody());
      await this.slots.evict(this.keySet(req), this.accountSet(req)).catch(() => undefined);
      return;
    }
    for (const stream of streams) {
      const held = this.streams.get(stream);
      if (held) this.arm(held, standing.validUntil);
    }
  }

  private arm(held: Held, until: number | undefined): void {
    clearTimeout(held.deadline);
    held.deadline = undefined;
    if (until === undefined) return;
    const wait = Math.max(0, until - Date.now());
    held.deadline = setTimeout(() => {
      if (wait > MAX_TIMER_MS) return this.arm(held, until);
      void this.recheck({ keyId: held.req.keyId });
    }, Math.min(wait, MAX_TIMER_MS));
    held.deadline.unref();
  }

  // Both sets in the account's Cluster slot.
  private accountSet(req: StreamRequest): string {
    return `${this.config.redisNamespace}:event-streams:{a:${req.accountId}}`;
  }

  private keySet(req: StreamRequest): string {
    return `${this.accountSet(req)}:k:${req.keyId}`;
  }

  private setsOf(req: StreamRequest): string[] {
    return [this.accountSet(req), this.keySet(req)];
  }

  /** -1 when taken; 0: the account is at its cap; 1: the key is. */
  private take(req: StreamRequest, slot: string): Promise<number> {
    const caps = [req.caps.account, req.caps.key];
    return this.slots.take({ sets: this.setsOf(req), caps, member: slot, leaseMs: this.leaseMs });
  }

  // A lease outlives two missed heartbeats.
  private get leaseMs(): number {
    return 3 * this.config.eventStreamHeartbeatMs;
  }

  private beat(): void {
    void this.live.probe();
    for (const [stream, { req, slot }] of this.streams) {
      stream.heartbeat();
      this.take(req, slot).catch((err: Error) => {
        this.logger.warn({ err: { message: err.message } }, 'event stream slot not renewed');
      });
    }
  }

  private forget(stream: EventStream): void {
    stream.unsubscribe();
    const held = this.streams.get(stream);
    if (!held) return;
    clearTimeout(held.deadline);
    this.streams.delete(stream);
    openStreams.dec();
    void this.slots.release(this.setsOf(held.req), held.slot).catch(() => undefined);
    if (!this.streams.size) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
