// The OpenAPI text of WebhooksController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import { ApiErrorResponse, ApiErrors, ApiQuotaError } from '../openapi/api-errors.decorator';
import { locationOf } from '../openapi/location-header';
import { LINK_HEADER } from '../common/pagination';
import {
  CreatedWebhookSchema,
  DeliveryAttemptSchema,
  DeliverySchema,
  RecoveredWebhookSchema,
  RotateWebhookSecretDto,
  WebhookSchema,
} from './webhooks.dto';
import { PLAN_RECOVER_PER_CALL } from '@app/access';
import { RECOVER_COOLDOWN_SECONDS } from '@app/webhooks';

/** "free 100, pro 1,000, ..." */
const RECOVER_CAPS = Object.entries(PLAN_RECOVER_PER_CALL)
  .map(([plan, n]) => `${plan} ${n.toLocaleString('en')}`)
  .join(', ');

export const CreateWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'createWebhook',
      summary: 'Subscribe a URL to event types; the signing secret is in this answer only',
      description:
        "Subscribes an http(s) URL to event types. Each matching event is POSTed to it signed as Standard Webhooks specifies (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`) with the `secret`, which appears in this answer only (until 2027-06-01 also with the legacy `Petstore-Signature`). An address on a private, loopback or reserved network written in the URL (or `localhost`) is refused with 400; a host name is not resolved here but before each delivery, which fails if it resolves to such an address. Subscribing to `api_key.*` events needs a key with the `admin` scope (403 `insufficient_scope`), and a webhook an `admin` key creates is managed by `admin` keys only. An account holds at most its plan's number of webhooks (free 10, pro 25, business 50, enterprise 100); one more is 422 `quota_exceeded`. Send an Idempotency-Key so a retried request does not subscribe twice.",
    }),
    ApiCreatedResponse({
      type: CreatedWebhookSchema,
      description: 'Created; `Location` names it',
      headers: locationOf('/v1/webhooks/{webhookId}'),
    }),
    ApiErrors(),
    ApiQuotaError('webhooks'),
  );

export const ListWebhooksDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listWebhooks',
      summary: 'The account’s webhooks (never their secrets)',
      description:
        'Every webhook of the account with its URL, event types and status (`active`, or `disabled` after failing deliveries). Secrets are never returned after creation. A key without the `admin` scope is not shown the admin-only webhooks (those receiving `api_key.*` events or created by an `admin` key); they still count towards the quota.',
    }),
    ApiOkResponse({ type: [WebhookSchema] }),
    ApiErrors(),
  );

export const GetWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getWebhook',
      summary: 'One webhook (never its secret)',
      description:
        'The webhook with its URL, event types, description, status and rotation grace; 404 for another account’s. A webhook receiving `api_key.*` events or created by an `admin` key is admin-only: this and every other operation on it need a key with the `admin` scope (403 `insufficient_scope`).',
    }),
    ApiOkResponse({ type: WebhookSchema }),
    ApiErrors(),
  );

export const UpdateWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'updateWebhook',
      summary: 'Change a webhook’s URL, event types, description, or enable or disable it',
      description:
        'Changes the fields sent. A new URL is checked as at creation (400 `validation_failed` naming `url`, with the reason). Subscribing to `api_key.*` events, or changing an admin-only webhook (one receiving them or created by an `admin` key), needs a key with the `admin` scope (403 `insufficient_scope`). `enabled: false` stops its deliveries (tests and resends still go); `enabled: true` re-enables it as POST /webhooks/{webhookId}/enable does. The secret is changed by POST /webhooks/{webhookId}/rotate.',
    }),
    ApiOkResponse({ type: WebhookSchema }),
    ApiErrors(),
  );

export const RotateWebhookSecretDocs = () =>
  applyDecorators(
    ApiBody({
      type: RotateWebhookSecretDto,
      required: false,
      description: 'Optional: without a body the grace period is one day',
    }),
    ApiOperation({
      operationId: 'rotateWebhookSecret',
      summary: 'New signing secret, shown once; the old one also signs for a grace period',
      description:
        'Issues a new `whsec_` secret (Standard Webhooks: base64 of 32 bytes). For `gracePeriodSeconds` (default 86400, at most 604800: 7 days; 0 ends it at once) deliveries carry a signature under each secret, space-separated in `webhook-signature`, so the receiver can switch over; a secret replaced by an earlier rotation stops signing now. A disabled webhook rotates too. Rotating an admin-only webhook (one receiving `api_key.*` events or created by an `admin` key) needs a key with the `admin` scope (403 `insufficient_scope`). Send an Idempotency-Key so a retried request does not rotate twice (the retry by the same key gets the same secret).',
    }),
    ApiCreatedResponse({ type: CreatedWebhookSchema }),
    ApiErrors(),
  );

export const DeleteWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook; its pending deliveries stop',
      description:
        'Deletes a webhook with its deliveries and their attempts (the receiver’s answers with them); deliveries not yet made to it are dropped. Events keep being recorded and can be read from GET /events. An admin-only webhook (one receiving `api_key.*` events or created by an `admin` key) is deleted only by a key with the `admin` scope (403 `insufficient_scope`).',
    }),
    ApiNoContentResponse({ description: 'Deleted' }),
    ApiErrors(),
  );

export const EnableWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'enableWebhook',
      summary: 'Re-enable a webhook disabled after failing deliveries',
      description:
        'Re-activates a webhook that was disabled after its deliveries kept failing, with the same URL and secret. Events from now on are delivered again; deliveries that failed while it was disabled stay failed and are not resent (POST /webhooks/{webhookId}/recover resends them). An admin-only webhook (one receiving `api_key.*` events or created by an `admin` key) is re-enabled only by a key with the `admin` scope (403 `insufficient_scope`).',
    }),
    ApiOkResponse({ type: WebhookSchema }),
    ApiErrors(),
  );

export const ListWebhookDeliveriesDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listWebhookDeliveries',
      summary: 'Deliveries to a webhook, in either order: attempts, last status, next retry',
      description:
        'The deliveries to a webhook in id order (oldest first, or newest first with `order=newest`), in keyset pages: event type, attempts made, the last attempt’s HTTP status, duration and the first 1 KB of the answer’s body, and when the next retry is due. Use it to debug a receiver. A delivered or failed delivery is kept 30 days (the operator’s `RETENTION_WEBHOOK_DELIVERIES_DAYS`). A key without the `admin` scope is not shown deliveries of `api_key.*` events.',
    }),
    ApiOkResponse({ type: [DeliverySchema], headers: LINK_HEADER }),
    ApiErrors(),
  );

export const ListWebhookDeliveryAttemptsDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listWebhookDeliveryAttempts',
      summary: 'Every attempt of a delivery: when, status, duration, answer excerpt, error',
      description:
        'The attempts made to send one delivery, oldest first, in keyset pages (`after` is the last attempt number seen): when each was made, the HTTP status that came back (null without an answer), how long it took, the first 1 KB of the answer’s body and, for a failed one, why. Kept as long as the delivery (the operator’s `RETENTION_WEBHOOK_DELIVERIES_DAYS`). 404 for an unknown delivery or another webhook’s or account’s; those of a delivery of an `api_key.*` event need a key with the `admin` scope (403 `insufficient_scope`).',
    }),
    ApiOkResponse({ type: [DeliveryAttemptSchema], headers: LINK_HEADER }),
    ApiErrors(),
  );

export const ResendWebhookDeliveryDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'resendWebhookDelivery',
      summary: 'Send a delivery’s event again, as a new delivery with the same webhook-id',
      description:
        'Queues the event of a delivery (delivered or failed, or a test) again as a new delivery, with attempts and retries of its own, even to a disabled webhook, and answers 202 at once. It carries the same `webhook-id` as the first, so a receiver that de-duplicates sees the same message; its `resendOf` names the first delivery. Each call sends once more: send an Idempotency-Key so a retried request does not. 404 for an unknown delivery or another webhook’s or account’s. An event type the webhook no longer receives is not resent (409 `event_not_subscribed`), and a delivery of an `api_key.*` event is resent only by a key with the `admin` scope (403 `insufficient_scope`).',
    }),
    ApiAcceptedResponse({ type: DeliverySchema }),
    ApiErrors(),
    ApiErrorResponse(409, 'The webhook no longer receives the event type of this delivery (event_not_subscribed)'),
  );

export const RecoverWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'recoverWebhook',
      summary: 'Resend the events whose deliveries since a time all failed; re-enable it',
      description: `Queues once more, as a new delivery each (as POST /webhooks/{webhookId}/deliveries/{deliveryId}/resend does: the same \`webhook-id\`, \`resendOf\` naming the first delivery), every event whose deliveries to this webhook made at or after \`since\` all failed and none of whose deliveries (the first one included, whenever it was made) was delivered or is still pending (its retries under way). With \`until\` (after \`since\`), only the events whose first delivery to this webhook was made before it: an incident's window is replayed alone. Tests are not resent. A disabled webhook is re-enabled. Answers 202 at once with the number queued; event types the webhook no longer receives are not resent and counted in \`skipped\`. At most the plan's number of events per call (${RECOVER_CAPS}): with \`more: true\` call again with the same \`since\` (and \`until\`) for the next ones (those queued are pending or delivered by then, so not queued twice). An event resent to this webhook (by a recover or a resend) within the last ${RECOVER_COOLDOWN_SECONDS / 3600} hour is not resent again, nor counted. A resend keeps its event's retry horizon (the event's time + \`WEBHOOK_MAX_AGE_SECONDS\`, 3 days by default) and its place in the retry schedule: an event past it gets one attempt, one before it the retries it has left. The bound on outbound POSTs, per event and webhook, worst case: 33 (one delivery's attempts before the horizon, with the default \`WEBHOOK_BACKOFF_MS\` and \`WEBHOOK_MAX_AGE_SECONDS\`) plus one per resend; with a receiver that keeps failing, recover adds at most one POST per event an hour, however often it is called. A \`since\` older than the deliveries kept (the operator's \`RETENTION_WEBHOOK_DELIVERIES_DAYS\`) covers those kept. Send an Idempotency-Key so a retried request answers the same without queuing more. An admin-only webhook (one receiving \`api_key.*\` events or created by an \`admin\` key) is recovered only by a key with the \`admin\` scope (403 \`insufficient_scope\`); without it, deliveries of \`api_key.*\` events are not resent.`,
    }),
    ApiAcceptedResponse({ type: RecoveredWebhookSchema }),
    ApiErrorResponse(422, '`until` is not after `since` (invalid_range; `details` name `until`)'),
    ApiErrors(),
  );

export const TestWebhookDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'testWebhook',
      summary: 'Queue a signed `webhook.test` delivery (one attempt)',
      description:
        'Queues one signed delivery of a `webhook.test` event to the webhook (a single attempt, no retries) and answers 202 at once. Follow its outcome in GET /webhooks/{webhookId}/deliveries. An admin-only webhook (one receiving `api_key.*` events or created by an `admin` key) is tested only by a key with the `admin` scope (403 `insufficient_scope`).',
    }),
    ApiAcceptedResponse({ type: DeliverySchema }),
    ApiErrors(),
  );
