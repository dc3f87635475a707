import { Injectable, Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import { ApiError } from '@app/errors';
import { RedisBroadcast } from '@app/redis';
import type { PublicEvent } from './views';

/** One channel for every account: a cluster keeps it on one shard (sharded pub/sub), every API replica hears it. */
export const LIVE_EVENTS_CHANNEL = 'events';
const LISTEN_TIMEOUT_MS = 2_000;

/** A committed event as published: its account, and whether only admin keys may see it (DomainEventEntity.adminOnly). */
export type LiveEvent = PublicEvent & { accountId: number; adminOnly: boolean };

export interface LiveSink {
  deliver(event: PublicEvent, adminOnly: boolean): void;
  /** Messages may have been missed: the stream must resume from the table. */
  lost(): void;
}

const publishFailures = new Counter({
  name: 'petstore_live_events_publish_failures_total',
  help: 'Committed events not published to the live streams (Redis unreachable); a stream resuming from its last id still gets them',
});

// `<accountId> <JSON array of events>`: a replica with no stream of the account reads no JSON. Admin-only events go
// in messages of their own, `<accountId>a ...`, which a replica of a release before them ignores (not a number).
const ADMIN_ONLY = 'a';
const messageOf = (head: string, events: PublicEvent[]) => `${head} ${JSON.stringify(events)}`;

/** Committed events to the open streams of every replica: published after commit, at most once (Redis pub/sub). */
@Injectable()
export class LiveEvents {
  private readonly logger = new Logger(LiveEvents.name);
  private readonly sinks = new Map<number, Set<LiveSink>>();
  private listening = false;
  private heard?: Promise<void>;
  private wake?: () => void;

  constructor(private readonly broadcast: RedisBroadcast) {}

  /** Best effort, never throws: the events are in the table, where a stream resuming from its last id reads them. */
  async publish(events: LiveEvent[]): Promise<void> {
    const byHead = new Map<string, PublicEvent[]>();
    for (const { accountId, adminOnly, ...event } of events) {
      const head = adminOnly ? `${accountId}${ADMIN_ONLY}` : String(accountId);
      const list = byHead.get(head) ?? [];
      if (!list.length) byHead.set(head, list);
      list.push(event);
    }
    await Promise.all(
      [...byHead].map(([head, list]) =>
        this.broadcast.publish(LIVE_EVENTS_CHANNEL, messageOf(head, list)).catch((err: Error) => {
          publishFailures.inc();
          this.logger.warn({ err: { message: err.message }, count: list.length }, 'live events not published');
        }),
      ),
    );
  }

  /** Resolves once this replica hears the channel (503 if Redis does not answer in time); returns the unsubscribe. */
  async subscribe(accountId: number, sink: LiveSink): Promise<() => void> {
    await this.hearing();
    const set = this.sinks.get(accountId) ?? new Set<LiveSink>();
    this.sinks.set(accountId, set.add(sink));
    return () => {
      set.delete(sink);
      if (!set.size && this.sinks.get(accountId) === set) this.sinks.delete(accountId);
    };
  }

  /** A connection that died silently is found by the probe (the deaf handler then ends every stream). */
  async probe(): Promise<void> {
    if (this.listening) await this.broadcast.probe(LIVE_EVENTS_CHANNEL).catch(() => undefined);
  }

  // Subscribed on the first stream only: a replica nobody streams from receives nothing.
  private hearing(): Promise<void> {
    if (this.listening) return Promise.resolve();
    if (!this.heard) {
      this.heard = new Promise<void>((resolve) => (this.wake = resolve));
      this.broadcast.listen(LIVE_EVENTS_CHANNEL, {
        onMessage: (message) => this.dispatch(message),
        onListening: () => {
          this.listening = true;
          this.wake?.();
        },
        onDeaf: () => this.deaf(),
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ApiError('service_unavailable', 'Live events are unavailable right now; try again shortly', undefined, {
              'Retry-After': '5',
            }),
          ),
        LISTEN_TIMEOUT_MS,
      );
    });
    return Promise.race([this.heard, timeout]).finally(() => clearTimeout(timer));
  }

  private dispatch(message: string): void {
    const space = message.indexOf(' ');
    const adminOnly = message[space - 1] === ADMIN_ONLY;
    const sinks = this.sinks.get(Number(message.slice(0, adminOnly ? space - 1 : space)));
    if (!sinks?.size) return;
    const events = JSON.parse(message.slice(space + 1)) as PublicEvent[];
    for (const sink of [...sinks]) for (const event of events) sink.deliver(event, adminOnly);
  }

  // Every open stream may have missed messages: each ends, and its client resumes from the table.
  private deaf(): void {
    if (this.listening) {
      this.listening = false;
      this.heard = new Promise<void>((resolve) => (this.wake = resolve));
    }
    const all = [...this.sinks.values()].flatMap((set) => [...set]);
    this.sinks.clear();
    for (const sink of all) sink.lost();
  }
}
