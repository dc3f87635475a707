import { columns, FeedOrder, feedPage, FOUND, JsonRow, raw, sql } from '@app/database';
import { ADMIN_EVENT_TYPES, DomainEvent, DomainEventEntity, EVENT_COLUMNS, isAdminEventType } from '@app/events';
import { DUE_COLUMNS, DuePage, DueRow, RemoveBatch, retentionQueries } from '@app/jobs';
import type { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';
import type { WebhookDeliveryEntity } from './webhook-delivery.entity';
import type { WebhookEntity } from './webhook.entity';

// Every statement of the webhooks library: webhooks, their deliveries and the deliveries' attempts.

/** Columns of a Webhook but its secret, for a webhooks table aliased `w`. */
const WEBHOOK_COLUMNS = `w.id, w.account_id AS "accountId", w.url, w.events, w.description, w.status,
  w.disabled_at AS "disabledAt", w.previous_secret_expires_at AS "previousSecretExpiresAt", w.created_at AS "createdAt",
  w.created_by_admin AS "createdByAdmin"`;
export type Webhook = Omit<WebhookEntity, 'secret' | 'previousSecret'>;
const WEBHOOK_ROW = columns<Webhook>({
  id: true,
  accountId: true,
  url: true,
  events: true,
  description: true,
  status: true,
  disabledAt: true,
  previousSecretExpiresAt: true,
  createdAt: true,
  createdByAdmin: true,
});

/**
 * The admin-only webhook rule: made by an admin key, or receiving any of ADMIN_EVENT_TYPES. Only `admin` keys see and
 * change it, and admin-only events go to no other. ADMIN_ONLY_WEBHOOK is the same rule in SQL (`list`, the fan-out).
 */
export const isAdminOnlyWebhook = (w: Pick<Webhook, 'createdByAdmin' | 'events'>): boolean =>
  w.createdByAdmin || w.events.some(isAdminEventType);

/** isAdminOnlyWebhook for a webhooks table aliased `w` (webhook-admin-only-rule.service-spec checks they agree). */
export const ADMIN_ONLY_WEBHOOK = sql`(w.created_by_admin OR w.events && ${ADMIN_EVENT_TYPES}::text[])`;

/** Columns of a WebhookDelivery, for a webhook_deliveries table aliased `d`. */
const DELIVERY_COLUMNS = `d.id, d.webhook_id AS "webhookId", d.account_id AS "accountId", d.event_id AS "eventId",
  d.event_type AS "eventType", d.status, d.attempts, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
  d.last_duration_ms AS "lastDurationMs", d.last_response_excerpt AS "lastResponseExcerpt", d.resend_of AS "resendOf",
  d.last_attempt_at AS "lastAttemptAt", d.next_attempt_at AS "nextAttemptAt", d.delivered_at AS "deliveredAt",
  d.created_at AS "createdAt"`;
export type WebhookDelivery = Omit<WebhookDeliveryEntity, 'traceparent'>;
const DELIVERY_ROW = columns<WebhookDelivery>({
  id: true,
  webhookId: true,
  accountId: true,
  eventId: true,
  eventType: true,
  status: true,
  attempts: true,
  lastStatusCode: true,
  lastError: true,
  lastDurationMs: true,
  lastResponseExcerpt: true,
  resendOf: true,
  lastAttemptAt: true,
  nextAttemptAt: true,
  deliveredAt: true,
  createdAt: true,
});

/** A delivery's created_at as DeliverWebhookBatchJob's key: microseconds since the epoch (exact: extract is numeric). */
export const CREATED_AT_US = `(extract(epoch FROM d.created_at) * 1000000)::bigint::text AS "createdAtUs"`;

export interface NewWebhookRow {
  url: string;
  events: readonly string[];
  description: string | null;
  /** Sealed. */
  secret: string;
  createdByAdmin: boolean;
}

/** Null leaves a column as it is; `description` is set when `setDescription`. */
export interface WebhookChange {
  url: string | null;
  events: readonly string[] | null;
  setDescription: boolean;
  description: string | null;
  enabled: boolean | null;
}

export type WebhookSecrets = Pick<WebhookEntity, 'id' | 'accountId' | 'secret' | 'previousSecret'>;

/** The row of a statement that answers the ids of the rows it wrote. */
const ID_ROW = columns<{ id: number }>({ id: true });

export const webhookQueries = {
  insert: (accountId: number, w: NewWebhookRow) =>
    sql`INSERT INTO webhooks AS w (account_id, url, events, description, secret, status, created_by_admin)
         VALUES (${accountId}, ${w.url}, ${w.events}, ${w.description}, ${w.secret}, 'active', ${w.createdByAdmin})
         RETURNING ${raw(WEBHOOK_COLUMNS)}`.returns(WEBHOOK_ROW),
  /** `lock`: none, FOR SHARE or FOR UPDATE. */
  find: (accountId: number, webhookId: number, lock: '' | 'FOR SHARE' | 'FOR UPDATE') =>
    sql`SELECT ${raw(WEBHOOK_COLUMNS)} FROM webhooks w WHERE w.id = ${webhookId} AND w.account_id = ${accountId} ${raw(lock)}`.returns(
      WEBHOOK_ROW,
    ),
  /** `admin` false: without the admin-only ones. */
  list: (accountId: number, admin: boolean) =>
    sql`SELECT ${raw(WEBHOOK_COLUMNS)} FROM webhooks w
        WHERE w.account_id = ${accountId} AND (${admin} OR NOT ${ADMIN_ONLY_WEBHOOK})
        ORDER BY w.id`.returns(WEBHOOK_ROW),
  update: (accountId: number, webhookId: number, c: WebhookChange) =>
    sql`UPDATE webhooks w SET url = coalesce(${c.url}, w.url), events = coalesce(${c.events}::text[], w.events),
          description = CASE WHEN ${c.setDescription}::boolean THEN ${c.description} ELSE w.description END,
          status = CASE WHEN ${c.enabled}::boolean IS NULL THEN w.status WHEN ${c.enabled}::boolean THEN 'active' ELSE 'disabled' END,
          disabled_at = CASE WHEN ${c.enabled}::boolean IS NULL THEN w.disabled_at WHEN ${c.enabled}::boolean THEN NULL
                             ELSE coalesce(w.disabled_at, now()) END
        WHERE w.id = ${webhookId} AND w.account_id = ${accountId}
        RETURNING ${raw(WEBHOOK_COLUMNS)}`.returns(WEBHOOK_ROW),
  /** The replaced secret (sealed) is kept for `graceSeconds` (none when 0). */
  rotateSecret: (accountId: number, webhookId: number, secret: string, graceSeconds: number) =>
    sql`UPDATE webhooks w SET secret = ${secret},
          previous_secret = CASE WHEN ${graceSeconds}::integer > 0 THEN w.secret END,
          previous_secret_expires_at = CASE WHEN ${graceSeconds}::integer > 0
            THEN now() + make_interval(secs => ${graceSeconds}::integer) END
        WHERE w.id = ${webhookId} AND w.account_id = ${accountId}
        RETURNING ${raw(WEBHOOK_COLUMNS)}`.returns(WEBHOOK_ROW),
  enable: (accountId: number, webhookId: number) =>
    sql`UPDATE webhooks w SET status = 'active', disabled_at = NULL WHERE w.id = ${webhookId} AND w.account_id = ${accountId}
  RETURNING ${raw(WEBHOOK_COLUMNS)}`.returns(WEBHOOK_ROW),
  /** Only an active one: null when it was disabled already. */
  disable: (webhookId: number) =>
    sql`UPDATE webhooks w SET status = 'disabled', disabled_at = now() WHERE w.id = ${webhookId} AND w.status = 'active'
       RETURNING ${raw(WEBHOOK_COLUMNS)}`.returns(WEBHOOK_ROW),
  delete: (accountId: number, webhookId: number) =>
    sql`DELETE FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}`,
  /** One webhook's, or all when `webhookId` is null. */
  secrets: (webhookId: number | null) =>
    sql`SELECT w.id, w.account_id AS "accountId", w.secret, w.previous_secret AS "previousSecret" FROM webhooks w
      WHERE ${webhookId}::bigint IS NULL OR w.id = ${webhookId} ORDER BY w.id`.returns<WebhookSecrets>({
      id: true,
      accountId: true,
      secret: true,
      previousSecret: true,
    }),
  /** Only if the row still holds what was read (`was`): another process resealing it meanwhile wins. */
  reseal: (was: WebhookSecrets, secret: string, previousSecret: string | null) =>
    sql`UPDATE webhooks SET secret = ${secret}, previous_secret = ${previousSecret}
        WHERE id = ${was.id} AND secret = ${was.secret} AND previous_secret IS NOT DISTINCT FROM ${was.previousSecret}
        RETURNING id`.returns(ID_ROW),
};

/** For the generated .sql file: `find` without a lock (the placeholder would stand in for the lock clause). */
export const webhookQueriesSamples: { [K in keyof typeof webhookQueries]?: Parameters<(typeof webhookQueries)[K]> } = {
  find: [1, 1, ''],
};

/** A delivery with what sending it takes, read in one statement. */
export interface DeliveryToSend extends WebhookDelivery {
  traceparent: string | null;
  /** Of a resend: the attempts the event's earlier deliveries to the webhook made (its retries go on from there); else 0. */
  chainAttempts?: number;
  webhook: Pick<
    WebhookEntity,
    | 'id'
    | 'accountId'
    | 'url'
    | 'status'
    | 'secret'
    | 'previousSecret'
    | 'previousSecretExpiresAt'
    | 'createdByAdmin'
    | 'events'
  >;
  /** Null for a test delivery. */
  event: JsonRow<DomainEvent & Pick<DomainEventEntity, 'adminOnly'>> | null;
}

const WEBHOOK_TO_SEND = `(SELECT row_to_json(x) FROM (SELECT ${WEBHOOK_COLUMNS}, w.secret, w.previous_secret AS "previousSecret" FROM webhooks w WHERE w.id = d.webhook_id) x)`;
const EVENT_TO_SEND = `(SELECT row_to_json(x) FROM (SELECT ${EVENT_COLUMNS}, e.admin_only AS "adminOnly" FROM events e WHERE e.account_id = d.account_id AND e.id = d.event_id) x) AS event`;
const TO_SEND_COLUMNS = `${DELIVERY_COLUMNS}, d.traceparent, ${WEBHOOK_TO_SEND} AS webhook, ${EVENT_TO_SEND}`;

/** DeliveryToSend.chainAttempts, for a webhook_deliveries table aliased `d` (through the event_id index). */
const CHAIN_ATTEMPTS = `CASE WHEN d.resend_of IS NULL OR d.event_id IS NULL THEN 0 ELSE
  (SELECT coalesce(sum(c.attempts), 0) FROM webhook_deliveries c
    WHERE c.event_id = d.event_id AND c.account_id = d.account_id AND c.webhook_id = d.webhook_id AND c.id < d.id)::int
  END AS "chainAttempts"`;

/** A batch's row: its one webhook comes on the first row only (null on the others), read and parsed once. */
export type BatchRowToSend = Omit<DeliveryToSend, 'webhook' | 'chainAttempts'> & {
  webhook: DeliveryToSend['webhook'] | null;
};
const TO_SEND_ROW = columns<BatchRowToSend>({ ...DELIVERY_ROW, traceparent: true, webhook: true, event: true });

/** A fan-out batch's time (DeliverWebhookBatchJob's createdAtUs) as a timestamp. */
const batchAt = (createdAtUs: string) => sql`timestamptz 'epoch' + ${createdAtUs}::bigint * interval '1 microsecond'`;

/** Recorded with the others that finish at the same time. */
export interface DeliveredAttempt {
  accountId: number;
  id: number;
  /** Attempts recorded before this one: the row changes only if nobody recorded it first. */
  attempts: number;
  statusCode: number | null;
  durationMs: number;
  excerpt: string | null;
  at: Date;
}

// After an UPDATE of webhook_deliveries as CTE `done` (RETURNING ATTEMPTED_COLUMNS), in the same statement: an
// attempt is logged exactly when its delivery counts it.
const ATTEMPTED_COLUMNS = `d.id, d.account_id, d.attempts, d.last_attempt_at, d.last_status_code, d.last_duration_ms,
  d.last_response_excerpt, d.last_error`;
const LOG_ATTEMPTS = `INSERT INTO webhook_delivery_attempts
    (account_id, delivery_id, attempt, attempted_at, status_code, duration_ms, response_excerpt, error)
  SELECT account_id, id, attempts, last_attempt_at, last_status_code, last_duration_ms, last_response_excerpt, last_error
    FROM done`;

/** A delivery the lost-job sweep found. */
export type DueDelivery = DueRow & { attempts: number; webhookId: number; createdAtUs: string; fannedOut: boolean };

/** Events to fan out, one array per column (unnest). */
export interface FanOutBatch {
  eventIds: number[];
  accountIds: number[];
  traceparents: (string | null)[];
}

export type FannedOutDelivery = Pick<WebhookDeliveryEntity, 'id' | 'accountId' | 'webhookId' | 'traceparent'> & {
  eventId: number;
  createdAtUs: string;
};

/** fanOutPending's rows: the delivery's columns are null in the one row of a page that made none. */
export type PendingPageRow = { pageEvents: number } & ({ [K in keyof FannedOutDelivery]: null } | FannedOutDelivery);
const FANNED_OUT_ROW = columns<FannedOutDelivery>({
  id: true,
  accountId: true,
  webhookId: true,
  eventId: true,
  traceparent: true,
  createdAtUs: true,
});

/** Who is recovering what: the event types the key may not see (api_key.* without `admin`), and the webhook's. */
export interface RecoverScope {
  accountId: number;
  webhookId: number;
  since: Date;
  /** Only the chains whose first delivery was made before then (null: no bound). */
  until: Date | null;
  events: readonly string[];
  hiddenTypes: readonly string[];
}

/** An event resent to a webhook (by recover or resend) within this long is not recovered again: one POST an hour. */
export const RECOVER_COOLDOWN_SECONDS = 3600;

// An event's deliveries to a webhook (the first and its resends) since `since`, of each event none delivered nor
// pending (retries under way), the first one included whenever it was made: it never reached the receiver; nor resent
// within RECOVER_COOLDOWN_SECONDS. Not of `hiddenTypes`; `subscribed` when of the webhook's `events`.
const failedSince = (r: RecoverScope) => sql`failed_chains AS (
    SELECT coalesce(d.resend_of, d.id) AS first, min(d.event_id) AS event_id, min(d.event_type) AS event_type
      FROM webhook_deliveries d
     WHERE d.account_id = ${r.accountId} AND d.webhook_id = ${r.webhookId} AND d.created_at >= ${r.since} AND d.event_id IS NOT NULL
       AND d.event_type <> ALL (${r.hiddenTypes}::text[])
     GROUP BY 1 HAVING bool_and(d.status = 'failed')),
  failed AS (
    SELECT c.first, c.event_id, c.event_type, c.event_type = ANY (${r.events}::text[]) AS subscribed FROM failed_chains c
     WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries f WHERE f.account_id = ${r.accountId} AND f.id = c.first
                        AND (f.status <> 'failed' OR f.created_at >= ${r.until}::timestamptz))
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r
                        WHERE r.event_id = c.event_id AND r.account_id = ${r.accountId} AND r.webhook_id = ${r.webhookId} AND r.resend_of IS NOT NULL
                          AND r.created_at > now() - interval '${raw(String(RECOVER_COOLDOWN_SECONDS))} seconds'))`;

/**
 * The deliveries of the events in `fanned`, one per subscribed webhook existing when the event was recorded; of an
 * admin-only event, only to admin-only webhooks.
 */
const DELIVERIES_OF_FANNED = sql`INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type, traceparent)
  SELECT w.id, e.account_id, e.id, e.type, e.traceparent
    FROM fanned e
    JOIN webhooks w ON w.account_id = e.account_id
   WHERE w.status = 'active' AND e.type = ANY (w.events) AND w.created_at <= e.created_at
     AND (NOT e.admin_only OR ${ADMIN_ONLY_WEBHOOK})
   ORDER BY e.id, w.id
  RETURNING d.id, d.account_id AS "accountId", d.webhook_id AS "webhookId", d.event_id AS "eventId", d.traceparent,
    ${raw(CREATED_AT_US)}`;

export const webhookDeliveryQueries = {
  // Deliveries are written only for the events the statement itself marks fanned out (their row lock orders two
  // fan-outs of one event), so a repeated fan-out adds nothing. Webhooks created after an event do not receive it.
  fanOut: (b: FanOutBatch) =>
    sql`WITH input AS (
    SELECT * FROM unnest(${b.eventIds}::bigint[], ${b.accountIds}::bigint[], ${b.traceparents}::text[]) AS i(event_id, account_id, traceparent)),
  fanned AS (
    UPDATE events e SET fanned_out = true FROM input i
     WHERE e.id = i.event_id AND e.account_id = i.account_id AND NOT e.fanned_out
    RETURNING e.id, e.account_id, e.type, e.created_at, e.admin_only, i.traceparent)
  ${DELIVERIES_OF_FANNED}`.returns(FANNED_OUT_ROW),
  /**
   * The account's oldest `limit` events not fanned out (skipping those another fan-out holds), fanned out; a row per
   * delivery with the page's event count, or one row of nulls but the count when the page made none. The update finds
   * the page's rows by key: joined to the page, a generic plan hashed every account's pending events; and without
   * `NOT fanned_out` (the page's lock already holds them unfanned), so no partition's statistics can send it through the
   * pending index, which it would walk to the end of the account's backlog (docs/internals/decisions/0040-webhook-fan-out-by-account.md).
   */
  fanOutPending: (accountId: number, limit: number) =>
    sql`WITH page AS (
    SELECT e.id, e.account_id FROM events e WHERE e.account_id = ${accountId} AND NOT e.fanned_out
     ORDER BY e.created_at, e.id LIMIT ${limit} FOR UPDATE SKIP LOCKED),
  fanned AS (
    UPDATE events e SET fanned_out = true
     WHERE e.account_id = ${accountId} AND e.id = ANY (ARRAY(SELECT p.id FROM page p))
    RETURNING e.id, e.account_id, e.type, e.created_at, e.admin_only, e.traceparent),
  delivered AS (${DELIVERIES_OF_FANNED})
  SELECT (SELECT count(*) FROM page)::int AS "pageEvents", x.* FROM (VALUES (1)) one(n)
    LEFT JOIN delivered x ON true ORDER BY x.id`.returns<PendingPageRow>({ pageEvents: true, ...FANNED_OUT_ROW }),
  /** A new delivery of the same event, as a resend of the chain's first. */
  resend: (accountId: number, webhookId: number, deliveryId: number) =>
    sql`INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type, resend_of)
         SELECT o.webhook_id, o.account_id, o.event_id, o.event_type, coalesce(o.resend_of, o.id)
           FROM webhook_deliveries o WHERE o.id = ${deliveryId} AND o.webhook_id = ${webhookId} AND o.account_id = ${accountId}
         RETURNING ${raw(DELIVERY_COLUMNS)}`.returns(DELIVERY_ROW),
  /** Resends each failed event (FAILED_SINCE) the webhook still receives, `limit` at most. */
  recover: (r: RecoverScope, limit: number) =>
    sql`WITH ${failedSince(r)}
  INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type, resend_of)
  SELECT ${r.webhookId}::bigint, ${r.accountId}::bigint, f.event_id, f.event_type, f.first FROM failed f WHERE f.subscribed ORDER BY f.first LIMIT ${limit}
  RETURNING d.id`.returns(ID_ROW),
  /** After `recover` in its transaction: the events it resent have a pending delivery now. */
  notRecovered: (r: RecoverScope) =>
    sql`WITH ${failedSince(r)}
  SELECT count(*) FILTER (WHERE NOT f.subscribed)::int AS skipped, coalesce(bool_or(f.subscribed), false) AS more
    FROM failed f`.returns<{ skipped: number; more: boolean }>({ skipped: true, more: true }),
  insertTest: (accountId: number, webhookId: number) =>
    sql`INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type) VALUES (${webhookId}, ${accountId}, NULL, 'webhook.test')
         RETURNING ${raw(DELIVERY_COLUMNS)}`.returns(DELIVERY_ROW),
  /** Locks the webhook's pending deliveries. */
  lockPending: (accountId: number, webhookId: number) =>
    sql`SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries d
          WHERE d.account_id = ${accountId} AND d.webhook_id = ${webhookId} AND d.status = 'pending' FOR UPDATE) pending`.returns<{
      count: string;
    }>({ count: true }),
  /** A feed page of the webhook's deliveries, none of `hiddenTypes` (null: all types). */
  page: (
    webhookId: number,
    q: { order: FeedOrder; after?: number; limit: number },
    hiddenTypes: readonly string[] | null,
  ) => {
    const page = feedPage('d', 'webhook_id', webhookId, q.order, q.after);
    const hidden = hiddenTypes ? sql`AND d.event_type <> ALL(${hiddenTypes}::text[])` : raw('');
    return sql`SELECT ${raw(DELIVERY_COLUMNS)} FROM webhook_deliveries d
        WHERE ${page.where} ${hidden} ${page.orderBy} LIMIT ${q.limit}`.returns(DELIVERY_ROW);
  },
  eventType: (accountId: number, webhookId: number, deliveryId: number) =>
    sql`SELECT d.event_type AS "eventType" FROM webhook_deliveries d
        WHERE d.id = ${deliveryId} AND d.webhook_id = ${webhookId} AND d.account_id = ${accountId}`.returns<{
      eventType: string;
    }>({ eventType: true }),
  toSend: (accountId: number, deliveryId: number) =>
    sql`SELECT ${raw(TO_SEND_COLUMNS)}, ${raw(CHAIN_ATTEMPTS)}
          FROM webhook_deliveries d WHERE d.id = ${deliveryId} AND d.account_id = ${accountId}`.returns<DeliveryToSend>(
      {
        ...TO_SEND_ROW,
        chainAttempts: true,
      },
    ),
  /** A fan-out batch's deliveries still at their first attempt, in event order (due time = created_at: the sweep's index). */
  batchToSend: (accountId: number, webhookId: number, createdAtUs: string) =>
    sql`SELECT ${raw(DELIVERY_COLUMNS)}, d.traceparent,
    CASE WHEN row_number() OVER (ORDER BY d.id) = 1 THEN ${raw(WEBHOOK_TO_SEND)} END AS webhook, ${raw(EVENT_TO_SEND)}
  FROM webhook_deliveries d
  WHERE d.status = 'pending' AND coalesce(d.next_attempt_at, d.created_at) = ${batchAt(createdAtUs)} AND d.created_at = ${batchAt(createdAtUs)}
    AND d.account_id = ${accountId} AND d.webhook_id = ${webhookId} AND d.attempts = 0 AND d.event_id IS NOT NULL AND d.resend_of IS NULL
  ORDER BY d.id`.returns(TO_SEND_ROW),
  markDelivered: (batch: readonly DeliveredAttempt[]) =>
    sql`WITH done AS (
    UPDATE webhook_deliveries d
       SET status = 'delivered', attempts = u.attempts + 1, last_status_code = u.status_code, last_error = NULL,
           last_attempt_at = u.at, next_attempt_at = NULL, delivered_at = u.at, last_duration_ms = u.duration_ms,
           last_response_excerpt = u.excerpt
      FROM unnest(${batch.map((a) => a.accountId)}::bigint[], ${batch.map((a) => a.id)}::bigint[], ${batch.map((a) => a.attempts)}::int[], ${batch.map((a) => a.statusCode)}::int[], ${batch.map((a) => a.at)}::timestamptz[], ${batch.map((a) => a.durationMs)}::int[], ${batch.map((a) => a.excerpt)}::text[])
        AS u(account_id, id, attempts, status_code, at, duration_ms, excerpt)
     WHERE d.account_id = u.account_id AND d.id = u.id AND d.attempts = u.attempts AND d.status = 'pending'
    RETURNING ${raw(ATTEMPTED_COLUMNS)}),
  logged AS (${raw(LOG_ATTEMPTS)})
  SELECT id FROM done`.returns(ID_ROW),
  /** `d` as read, changed to `next` only if nobody recorded this attempt first; an attempt is logged when it counts one more. */
  recordAttempt: (d: WebhookDelivery, next: WebhookDelivery) =>
    sql`WITH done AS (
    UPDATE webhook_deliveries d
       SET status = ${next.status}, attempts = ${next.attempts}, last_status_code = ${next.lastStatusCode},
           last_error = ${next.lastError}, last_attempt_at = ${next.lastAttemptAt}, next_attempt_at = ${next.nextAttemptAt},
           delivered_at = ${next.deliveredAt}, last_duration_ms = ${next.lastDurationMs},
           last_response_excerpt = ${next.lastResponseExcerpt}
     WHERE d.account_id = ${d.accountId} AND d.id = ${d.id} AND d.attempts = ${d.attempts} AND d.status = 'pending'
    RETURNING ${raw(ATTEMPTED_COLUMNS)}),
  logged AS (${raw(LOG_ATTEMPTS)} WHERE attempts > ${d.attempts}::int)
  SELECT id FROM done`.returns(ID_ROW),
  /** First attempts and retries whose time has come, of other accounts. */
  othersWaiting: (accountId: number) =>
    sql`SELECT 1 AS found FROM webhook_deliveries
          WHERE status = 'pending' AND account_id <> ${accountId} AND (next_attempt_at IS NULL OR next_attempt_at <= now())
          LIMIT 1`.returns(FOUND),
  /** The lost-job sweep's statement (SweepSource.due): pending deliveries one sweep interval past their next attempt. */
  sweepDue: ({ olderThanMs, limit, after }: DuePage) =>
    sql`SELECT d.id, d.account_id AS "accountId", d.attempts, d.traceparent,
         coalesce(d.next_attempt_at, d.created_at)::text AS "dueAt", d.webhook_id AS "webhookId", ${raw(CREATED_AT_US)},
         (d.event_id IS NOT NULL AND d.resend_of IS NULL) AS "fannedOut"
       FROM webhook_deliveries d
       WHERE d.status = 'pending'
         AND coalesce(d.next_attempt_at, d.created_at) < now() - make_interval(secs => ${olderThanMs}::double precision / 1000)
         AND (coalesce(d.next_attempt_at, d.created_at), d.id) > (coalesce(${after?.dueAt ?? null}::timestamptz, '-infinity'), coalesce(${after?.id ?? null}::bigint, 0))
       ORDER BY coalesce(d.next_attempt_at, d.created_at), d.id LIMIT ${limit}
       FOR UPDATE SKIP LOCKED`.returns<DueDelivery>({
      ...DUE_COLUMNS,
      attempts: true,
      webhookId: true,
      createdAtUs: true,
      fannedOut: true,
    }),
  /** Retention: rows that keep their partition from being dropped (PartitionedHistory.openRows). */
  openRows: () => raw(`status = 'pending'`),
};

export type DeliveryAttemptRow = Omit<WebhookDeliveryAttemptEntity, 'accountId' | 'deliveryId'>;

export const webhookAttemptQueries = {
  /** A page of a delivery's attempts after attempt number `after`, oldest first. */
  page: (accountId: number, deliveryId: number, after: number, limit: number) =>
    sql`SELECT a.attempt, a.attempted_at AS "attemptedAt", a.status_code AS "statusCode", a.duration_ms AS "durationMs",
              a.response_excerpt AS "responseExcerpt", a.error
         FROM webhook_delivery_attempts a
        WHERE a.account_id = ${accountId} AND a.delivery_id = ${deliveryId} AND a.attempt > ${after}::bigint
        ORDER BY a.attempt LIMIT ${limit}`.returns<DeliveryAttemptRow>({
      attempt: true,
      attemptedAt: true,
      statusCode: true,
      durationMs: true,
      responseExcerpt: true,
      error: true,
    }),
  deleteOfWebhook: (accountId: number, webhookId: number) =>
    sql`DELETE FROM webhook_delivery_attempts a USING webhook_deliveries d
          WHERE d.account_id = ${accountId} AND d.webhook_id = ${webhookId} AND a.account_id = d.account_id AND a.delivery_id = d.id`,
  /** Retention: those older than `olderThanDays` whose delivery is gone (no foreign key cascades them). */
  remove: (batch: RemoveBatch) =>
    retentionQueries.batchRemove(
      'webhook_delivery_attempts',
      'attempted_at',
      batch,
      raw('NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.account_id = r.account_id AND d.id = r.delivery_id)'),
    ),
};
