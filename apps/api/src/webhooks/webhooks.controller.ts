import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { WebhookView } from '@app/webhooks';
import { Auth } from '../gate/auth.decorator';
import { FeedQuery, page, PageQuery } from '../common/pagination';
import {
  CreatedWebhookSchema,
  NewWebhookDto,
  RecoverWebhookDto,
  RotateWebhookSecretDto,
  recoverWindowOf,
  WebhookUpdateDto,
} from './webhooks.dto';
import {
  DEFAULT_WEBHOOK_ROTATION_GRACE_SECONDS,
  DeliveryAttemptView,
  DeliveryView,
  RecoverResult,
  WebhooksService,
} from '@app/webhooks';
import { Policy } from '../policy/route-policy.decorator';
import {
  CreateWebhookDocs,
  ListWebhooksDocs,
  GetWebhookDocs,
  UpdateWebhookDocs,
  RotateWebhookSecretDocs,
  DeleteWebhookDocs,
  EnableWebhookDocs,
  ListWebhookDeliveriesDocs,
  ListWebhookDeliveryAttemptsDocs,
  ResendWebhookDeliveryDocs,
  RecoverWebhookDocs,
  TestWebhookDocs,
} from './webhooks.openapi';

@ApiTags('Webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post()
  @Policy({ scope: 'write', idempotent: 'same-key', stability: 'experimental' })
  @Header('Cache-Control', 'no-store') // the answer carries a secret
  @CreateWebhookDocs()
  create(
    @Auth() auth: AuthContext,
    @Body() body: NewWebhookDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<CreatedWebhookSchema> {
    return this.idempotency.run(res, async () => {
      const webhook = await this.webhooks.create(auth.accountId, body, auth.scopes);
      res.header('Location', `/v1/webhooks/${webhook.id}`);
      return webhook;
    });
  }

  @Get()
  @Policy({ scope: 'read', stability: 'experimental' })
  @ListWebhooksDocs()
  list(@Auth() auth: AuthContext): Promise<WebhookView[]> {
    return this.webhooks.list(auth.accountId, auth.scopes);
  }

  @Get(':webhookId')
  @Policy({ scope: 'read', stability: 'experimental' })
  @GetWebhookDocs()
  get(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<WebhookView> {
    return this.webhooks.get(auth.accountId, webhookId, auth.scopes);
  }

  @Patch(':webhookId')
  @Policy({ scope: 'write', stability: 'experimental' })
  @UpdateWebhookDocs()
  update(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Body() body: WebhookUpdateDto,
  ): Promise<WebhookView> {
    return this.webhooks.update(auth.accountId, webhookId, body, auth.scopes);
  }

  @Post(':webhookId/rotate')
  @Policy({ scope: 'write', idempotent: 'same-key', stability: 'experimental' })
  @Header('Cache-Control', 'no-store') // the answer carries a secret
  @RotateWebhookSecretDocs()
  rotate(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Body() body: RotateWebhookSecretDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<CreatedWebhookSchema> {
    const grace = body.gracePeriodSeconds ?? DEFAULT_WEBHOOK_ROTATION_GRACE_SECONDS;
    return this.idempotency.run(res, () => this.webhooks.rotate(auth.accountId, webhookId, grace, auth.scopes));
  }

  @Delete(':webhookId')
  @Policy({ scope: 'write', stability: 'experimental' })
  @HttpCode(204)
  @DeleteWebhookDocs()
  async remove(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<void> {
    await this.webhooks.remove(auth.accountId, webhookId, auth.scopes);
  }

  @Post(':webhookId/enable')
  @Policy({ scope: 'write', stability: 'experimental' })
  @HttpCode(200)
  @EnableWebhookDocs()
  enable(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<WebhookView> {
    return this.webhooks.enable(auth.accountId, webhookId, auth.scopes);
  }

  @Get(':webhookId/deliveries')
  @Policy({ scope: 'read', stability: 'experimental' })
  @ListWebhookDeliveriesDocs()
  async deliveries(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Query() query: FeedQuery,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<DeliveryView[]> {
    const rows = await this.webhooks.deliveries(auth.accountId, webhookId, query, auth.scopes);
    return page(res, `/v1/webhooks/${webhookId}/deliveries`, query, rows);
  }

  @Get(':webhookId/deliveries/:deliveryId/attempts')
  @Policy({ scope: 'read', stability: 'experimental' })
  @ListWebhookDeliveryAttemptsDocs()
  async attempts(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Param('deliveryId', ParseIdPipe) deliveryId: number,
    @Query() query: PageQuery,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<DeliveryAttemptView[]> {
    const rows = await this.webhooks.attempts(auth.accountId, webhookId, deliveryId, query, auth.scopes);
    const path = `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/attempts`;
    return page(res, path, query, rows, (a) => a.attempt);
  }

  @Post(':webhookId/deliveries/:deliveryId/resend')
  @Policy({ scope: 'write', idempotent: 'account', stability: 'experimental' })
  @HttpCode(202)
  @ResendWebhookDeliveryDocs()
  resend(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Param('deliveryId', ParseIdPipe) deliveryId: number,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<DeliveryView> {
    return this.idempotency.run(
      res,
      () => this.webhooks.resend(auth.accountId, webhookId, deliveryId, auth.scopes),
      () => this.webhooks.authorize(auth.accountId, webhookId, auth.scopes, deliveryId),
    );
  }

  @Post(':webhookId/recover')
  @Policy({ scope: 'write', idempotent: 'account', stability: 'experimental' })
  @HttpCode(202)
  @RecoverWebhookDocs()
  recover(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Body() body: RecoverWebhookDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<RecoverResult> {
    const { since, until } = recoverWindowOf(body);
    return this.idempotency.run(
      res,
      () => this.webhooks.recover(auth.accountId, webhookId, { since, until }, auth.scopes, auth.plan),
      () => this.webhooks.authorize(auth.accountId, webhookId, auth.scopes),
    );
  }

  @Post(':webhookId/test')
  @Policy({ scope: 'write', stability: 'experimental' })
  @HttpCode(202)
  @TestWebhookDocs()
  test(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<DeliveryView> {
    return this.webhooks.test(auth.accountId, webhookId, auth.scopes);
  }
}
