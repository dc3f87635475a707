// The OpenAPI text of EventsController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { EventSchema } from './events.dto';
import { LINK_HEADER } from '../common/pagination';

export const ListEventsDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listEvents',
      summary: 'The account’s domain events, oldest first; poll with `after` for new ones',
      description:
        "The account's domain events in id order (oldest first), in keyset pages; `order=newest` lists the latest first (a dashboard's view; `after` then pages towards older ones). Poll with `after` set to the last id you processed to receive only new events; `type` filters one event type. `data` depends on `type` (see the Event schema). Events are kept 30 days (the operator’s `RETENTION_EVENTS_DAYS`): poll more often than that. The `api_key.*` events are listed only to a key with the `admin` scope; another key does not see them, and asking for one with `type` is 403 `insufficient_scope`.",
    }),
    ApiOkResponse({ type: [EventSchema], headers: LINK_HEADER }),
    ApiErrors(403),
  );

export const StreamEventsDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'streamEvents',
      summary: 'The account’s events as they happen (server-sent events), resumable',
      description:
        'A `text/event-stream` that stays open: each event as `id: <event id>`, `event: <type>`, `data: <the event as GET /events lists it>`, and a `: heartbeat` comment every 15 s. Send `Last-Event-ID` (an EventSource does on reconnecting) or `after` to resume: the events after that id are sent first, then the live ones, none missed or repeated at the seam. Without either, only events from now on, and the first frame is `id: <the newest event id>` alone (no event), so a client that reconnects before any event came resumes from there. `type` filters (comma-separated types); `api_key.*` events come only to a key with the `admin` scope (asking for them otherwise is 403 `insufficient_scope`). The server ends a stream on shutdown, when its client falls too far behind, or when it may have missed events, always after a `retry:` hint: reconnect with the last id received and nothing is lost. Within 1 s of its key being revoked, expiring or leaving its rotation grace period, a stream gets a last `event: error` frame whose `data` is the Error body (`invalid_api_key`), then ends: do not resume with that key. A key holds at most 2 streams at once on Free, 10 on Pro, 50 on Business, 100 on Enterprise, and an account at most 4, 20, 100 and 500 over all its keys (429 `rate_limit_exceeded` beyond, `details` naming `streams`); a stream counts as one request.',
    }),
    ApiProduces('text/event-stream'),
    ApiOkResponse({
      description: 'The stream: events, heartbeat comments and, when the server ends it, a `retry:` hint',
      content: {
        'text/event-stream': {
          schema: { type: 'string' },
          example: 'id: 1042\nevent: pet.created\ndata: {"id":1042,"type":"pet.created",...}\n\n',
        },
      },
    }),
    ApiHeader({
      name: 'Last-Event-ID',
      required: false,
      description: 'The last event id received: the stream resumes after it (as `after`, which it overrides)',
      schema: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
    }),
    ApiErrors(403),
  );
