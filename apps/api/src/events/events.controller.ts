import { Controller, Get, Headers, Logger, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthContext, hashApiKey, PLAN_ACCOUNT_STREAMS, PLAN_STREAMS, usableUntil } from '@app/access';
import { ApiError } from '@app/errors';
import { EventStreams, isAdminEventType, PublicEvent } from '@app/events';
import { Auth } from '../gate/auth.decorator';
import { ListEventsQuery, StreamEventsQuery } from './events.dto';
import { EventsService } from '@app/events';
import { page } from '../common/pagination';
import { Policy } from '../policy/route-policy.decorator';
import { SERVER_DRAINING } from '../http-server';
import { SseOutput } from './sse-output';
import { ListEventsDocs, StreamEventsDocs } from './events.openapi';
import { StreamKeyWatch } from './stream-key-watch';

const refuseAdminTypes = () =>
  new ApiError('insufficient_scope', 'api_key.* events need the admin scope, which this API key lacks');

// What an EventSource sends back on reconnecting: the last `id:` it received.
function lastEventId(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (!/^[1-9][0-9]{0,15}$/.test(header) || !Number.isSafeInteger(Number(header)))
    throw new ApiError('invalid_parameter', 'Last-Event-ID must be an event id (a positive integer)', [
      { field: 'Last-Event-ID', message: 'must be a positive integer' },
    ]);
  return Number(header);
}

@ApiTags('Events')
@Controller('events')
export class EventsController {
  private readonly logger = new Logger(EventsController.name);

  constructor(
    private readonly events: EventsService,
    private readonly streams: EventStreams,
    private readonly keyWatch: StreamKeyWatch,
  ) {}

  @Get()
  @Policy({ scope: 'read', stability: 'beta' })
  @ListEventsDocs()
  async list(
    @Auth() auth: AuthContext,
    @Query() query: ListEventsQuery,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<PublicEvent[]> {
    const adminEvents = auth.scopes.includes('admin');
    if (!adminEvents && query.type && isAdminEventType(query.type)) throw refuseAdminTypes();
    return page(res, '/v1/events', query, await this.events.list(auth.accountId, { ...query, adminEvents }));
  }

  @Get('stream')
  @Policy({ scope: 'read', stability: 'experimental' })
  @StreamEventsDocs()
  async stream(
    @Auth() auth: AuthContext,
    @Query() query: StreamEventsQuery,
    @Headers('last-event-id') lastId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const adminEvents = auth.scopes.includes('admin');
    const types = query.type ?? [];
    if (!adminEvents && types.some(isAdminEventType)) throw refuseAdminTypes();
    const output = new SseOutput(reply);
    // The gate let exactly one `Bearer <key>` through.
    const keyHash = hashApiKey(req.headers.authorization!.slice('Bearer '.length));
    const stream = await this.streams.open(
      {
        accountId: auth.accountId,
        keyId: auth.keyId,
        caps: { key: PLAN_STREAMS[auth.plan], account: PLAN_ACCOUNT_STREAMS[auth.plan] },
        filter: { types, adminEvents },
        after: lastEventId(lastId) ?? query.after,
        keyValidUntil: usableUntil(auth),
        recheckKey: () => this.keyWatch.standing(keyHash),
      },
      output,
    );
    const res = reply.raw;
    // The client may have gone while its slot was taken: 'close' would not come again.
    if (res.socket?.destroyed ?? true) return stream.end();
    res.on('close', () => stream.end());
    res.on('drain', () => stream.drained());
    res.once(SERVER_DRAINING, () => stream.end('shutdown'));
    output.begin();
    stream.start().catch((err: Error) => {
      this.logger.warn({ err: { message: err.message } }, 'event stream backlog not read: the client resumes');
      stream.end('lost');
    });
  }
}
