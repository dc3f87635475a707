import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { MessageView } from '@app/messages';
import { LINK_HEADER, page } from '../common/pagination';
import { Auth } from '../gate/auth.decorator';
import { IdempotencyService } from '../idempotency/idempotency.service';
import {
  ListMessagesQueryDto,
  MessageDetailSchema,
  MessageIdParams,
  MessageSchema,
  NewMessageDto,
} from './messages.dto';
import { AcceptedMessage, MessagesService } from '@app/messages';
import { locationOf } from '../openapi/location-header';
import { Policy } from '../policy/route-policy.decorator';

@ApiTags('Messages')
@Controller('messages')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @HttpCode(202)
  @ApiOperation({
    operationId: 'createMessage',
    summary: 'Queue a message; it is stored before the answer and processed by the worker',
    description:
      'Stores a message and queues it for the worker, answering 202 with status `queued` before it is processed. Poll GET /messages/{id} (or listen for `message.processed` / `message.failed`) for the result. Send an Idempotency-Key so a retry does not queue it twice.',
  })
  @ApiAcceptedResponse({
    type: MessageSchema,
    description: 'Accepted and queued',
    headers: locationOf('/v1/messages/{id}'),
  })
  async create(
    @Auth() auth: AuthContext,
    @Body() body: NewMessageDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AcceptedMessage> {
    return this.idempotency.run(res, async () => {
      const message = await this.messages.create(auth.accountId, body.message);
      res.location(`/v1/messages/${message.id}`);
      return message;
    });
  }

  @Get()
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'listMessages',
    summary: 'The account’s messages, oldest (or newest) first, in keyset pages',
    description:
      'The account\'s messages in creation order (oldest first, or newest first with `order=newest`), in keyset pages, optionally filtered by status. Follow `Link: rel="next"` for the next page. A processed or failed message is kept 30 days after it was accepted (the operator’s `RETENTION_MESSAGES_DAYS`), then answers 404 like any missing message.',
  })
  @ApiOkResponse({ type: [MessageDetailSchema], headers: LINK_HEADER })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: ListMessagesQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageView[]> {
    return page(res, '/v1/messages', query, await this.messages.list(auth.accountId, query));
  }

  @Get(':id')
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'getMessage',
    summary: 'A message and its processing state',
    description:
      'A message with its processing state: attempts made, the result (character count and SHA-256) once `processed`, the reason once `failed`. A processed or failed message is kept 30 days after it was accepted (the operator’s `RETENTION_MESSAGES_DAYS`), then answers 404 like any missing message.',
  })
  @ApiOkResponse({ type: MessageDetailSchema })
  get(@Auth() auth: AuthContext, @Param() params: MessageIdParams): Promise<MessageView> {
    return this.messages.get(auth.accountId, params.id);
  }
}
