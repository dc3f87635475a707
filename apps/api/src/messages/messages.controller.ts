import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { MessageView } from '@app/messages';
import { page } from '../common/pagination';
import { Auth } from '../gate/auth.decorator';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { ListMessagesQueryDto, MessageIdParams, NewMessageDto } from './messages.dto';
import { AcceptedMessage, MessagesService } from '@app/messages';
import { Policy } from '../policy/route-policy.decorator';
import { CreateMessageDocs, ListMessagesDocs, GetMessageDocs } from './messages.openapi';

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
  @CreateMessageDocs()
  create(
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
  @ListMessagesDocs()
  async list(
    @Auth() auth: AuthContext,
    @Query() query: ListMessagesQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageView[]> {
    return page(res, '/v1/messages', query, await this.messages.list(auth.accountId, query));
  }

  @Get(':id')
  @Policy({ scope: 'read' })
  @GetMessageDocs()
  get(@Auth() auth: AuthContext, @Param() params: MessageIdParams): Promise<MessageView> {
    return this.messages.get(auth.accountId, params.id);
  }
}
