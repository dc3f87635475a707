import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { ApiError } from '@app/errors';
import { isAdminEventType, PublicEvent } from '@app/events';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { EventSchema, ListEventsQuery } from './events.dto';
import { EventsService } from '@app/events';
import { LINK_HEADER, page } from '../common/pagination';
import { Policy } from '../gate/route-policy.decorator';

@ApiTags('Events')
@Controller('events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @Policy({ scope: 'read', stability: 'beta' })
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'The account’s domain events, oldest first; poll with `after` for new ones',
    description:
      "The account's domain events in id order (oldest first), in keyset pages; `order=newest` lists the latest first (a dashboard's view; `after` then pages towards older ones). Poll with `after` set to the last id you processed to receive only new events; `type` filters one event type. `data` depends on `type` (see the Event schema). Events are kept 30 days (the operator’s `RETENTION_EVENTS_DAYS`): poll more often than that. The `api_key.*` events are listed only to a key with the `admin` scope; another key does not see them, and asking for one with `type` is 403 `insufficient_scope`.",
  })
  @ApiOkResponse({ type: [EventSchema], headers: LINK_HEADER })
  @ApiErrors(403)
  async list(
    @Auth() auth: AuthContext,
    @Query() query: ListEventsQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PublicEvent[]> {
    const adminEvents = auth.scopes.includes('admin');
    if (!adminEvents && query.type && isAdminEventType(query.type))
      throw new ApiError('insufficient_scope', 'api_key.* events need the admin scope, which this API key lacks');
    return page(res, '/v1/events', query, await this.events.list(auth.accountId, { ...query, adminEvents }));
  }
}
