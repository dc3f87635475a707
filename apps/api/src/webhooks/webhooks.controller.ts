import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { WebhookView } from '@app/webhooks';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors, ApiQuotaError } from '../openapi/api-errors.decorator';
import { FeedQuery, LINK_HEADER, page } from '../common/pagination';
import { CreatedWebhookSchema, DeliverySchema, NewWebhookDto, WebhookSchema } from './webhooks.dto';
import { DeliveryView, WebhooksService } from '@app/webhooks';
import { Policy } from '../gate/route-policy.decorator';

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
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Subscribe a URL to event types; the signing secret is in this answer only',
    description:
      "Subscribes an http(s) URL to event types. Each matching event is POSTed to it signed as Standard Webhooks specifies (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`) with the `secret`, which appears in this answer only (until 2027-06-01 also with the legacy `Petstore-Signature`). Addresses on private, loopback or reserved networks are refused with 400. Subscribing to `api_key.*` events needs a key with the `admin` scope (403 `insufficient_scope`). An account holds at most its plan's number of webhooks (free 10, pro 25, business 50, enterprise 100); one more is 422 `quota_exceeded`. Send an Idempotency-Key so a retried request does not subscribe twice.",
  })
  @ApiCreatedResponse({ type: CreatedWebhookSchema })
  @ApiErrors()
  @ApiQuotaError('webhooks')
  create(
    @Auth() auth: AuthContext,
    @Body() body: NewWebhookDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CreatedWebhookSchema> {
    return this.idempotency.run(res, () => this.webhooks.create(auth.accountId, body, auth.scopes));
  }

  @Get()
  @Policy({ scope: 'read', stability: 'experimental' })
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'The account’s webhooks (never their secrets)',
    description:
      'Every webhook of the account with its URL, event types and status (`active`, or `disabled` after failing deliveries). Secrets are never returned after creation.',
  })
  @ApiOkResponse({ type: [WebhookSchema] })
  @ApiErrors()
  list(@Auth() auth: AuthContext): Promise<WebhookView[]> {
    return this.webhooks.list(auth.accountId);
  }

  @Delete(':webhookId')
  @Policy({ scope: 'write', stability: 'experimental' })
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook; its pending deliveries stop',
    description:
      'Deletes a webhook; deliveries not yet made to it are dropped. Events keep being recorded and can be read from GET /events.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors()
  async remove(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<void> {
    await this.webhooks.remove(auth.accountId, webhookId);
  }

  @Post(':webhookId/enable')
  @Policy({ scope: 'write', stability: 'experimental' })
  @HttpCode(200)
  @ApiOperation({
    operationId: 'enableWebhook',
    summary: 'Re-enable a webhook disabled after failing deliveries',
    description:
      'Re-activates a webhook that was disabled after its deliveries kept failing, with the same URL and secret. Events from now on are delivered again; deliveries that failed while it was disabled stay failed and are not resent (read them from GET /events).',
  })
  @ApiOkResponse({ type: WebhookSchema })
  @ApiErrors()
  enable(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<WebhookView> {
    return this.webhooks.enable(auth.accountId, webhookId);
  }

  @Get(':webhookId/deliveries')
  @Policy({ scope: 'read', stability: 'experimental' })
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'Deliveries to a webhook, in either order: attempts, last status, next retry',
    description:
      'The deliveries to a webhook in id order (oldest first, or newest first with `order=newest`), in keyset pages: event type, attempts made, last HTTP status received and when the next retry is due. Use it to debug a receiver. A delivered or failed delivery is kept 30 days (the operator’s `RETENTION_WEBHOOK_DELIVERIES_DAYS`).',
  })
  @ApiOkResponse({ type: [DeliverySchema], headers: LINK_HEADER })
  @ApiErrors()
  async deliveries(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Query() query: FeedQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DeliveryView[]> {
    const rows = await this.webhooks.deliveries(auth.accountId, webhookId, query);
    return page(res, `/v1/webhooks/${webhookId}/deliveries`, query, rows);
  }

  @Post(':webhookId/test')
  @Policy({ scope: 'write', stability: 'experimental' })
  @HttpCode(202)
  @ApiOperation({
    operationId: 'testWebhook',
    summary: 'Queue a signed `webhook.test` delivery (one attempt)',
    description:
      'Queues one signed delivery of a `webhook.test` event to the webhook (a single attempt, no retries) and answers 202 at once. Follow its outcome in GET /webhooks/{webhookId}/deliveries.',
  })
  @ApiAcceptedResponse({ type: DeliverySchema })
  @ApiErrors()
  test(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<DeliveryView> {
    return this.webhooks.test(auth.accountId, webhookId);
  }
}
