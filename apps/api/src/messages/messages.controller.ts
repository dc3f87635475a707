import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthContext } from '@app/access';
import { MessageView } from '@app/messages';
import { page } from '../common/pagination';
import { ApiValidationPipe } from '@app/errors';
import { Auth, authOf } from '../gate/auth.decorator';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { ListMessagesQueryDto, MessageIdParams, NewMessageDto } from './messages.dto';
import { AcceptedMessage, MessagesService } from '@app/messages';
import { Policy } from '../policy/route-policy.decorator';
import { CreateMessageDocs, ListMessagesDocs, GetMessageDocs } from './messages.openapi';

/** The global pipe, for a body `acceptsBody` refuses: class-validator writes its error details. */
const BODY = new ApiValidationPipe();
const NEW_MESSAGE_BODY = { type: 'body', metatype: NewMessageDto } as const;

@ApiTags('Messages')
@Controller('messages')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly idempotency: IdempotencyService,
  ) {}

  // The key from res.locals and the body checked here: Nest settles every parameter a pipe may see through promises
  // of its own (docs/internals/decisions/0043-no-parameter-pipes-on-hot-routes.md).
  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @HttpCode(202)
  @ApiBody({ type: NewMessageDto })
  @CreateMessageDocs()
  create(@Res({ passthrough: true }) res: FastifyReply): Promise<AcceptedMessage> {
    const body: unknown = res.request.body;
    if (!NewMessageDto.acceptsBody(body))
      return (BODY.transform(body, NEW_MESSAGE_BODY) as Promise<NewMessageDto>).then((dto) =>
        this.accept(res, dto.message),
      );
    return this.accept(res, (body as NewMessageDto).message);
  }

  private accept(res: FastifyReply, text: string): Promise<AcceptedMessage> {
    return this.idempotency.run(res, () =>
      this.messages.create(authOf(res).accountId, text).then((message) => {
        res.header('Location', `/v1/messages/${message.id}`);
        return message;
      }),
    );
  }

  @Get()
  @Policy({ scope: 'read' })
  @ListMessagesDocs()
  async list(
    @Auth() auth: AuthContext,
    @Query() query: ListMessagesQueryDto,
    @Res({ passthrough: true }) res: FastifyReply,
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
