import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiExtension,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/auth';
import { ParseIdPipe } from '@app/errors';
import { WebhookView } from '@app/webhooks';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { LINK_HEADER, page, PageQuery } from '../common/pagination';
import { CreatedWebhookSchema, DeliverySchema, NewWebhookDto, WebhookSchema } from './webhooks.dto';
import { DeliveryView, WebhooksService } from './webhooks.service';

@ApiTags('Webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiExtension('x-stability', 'experimental')
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Subscribe a URL to event types; the signing secret is in this answer only',
  })
  @ApiCreatedResponse({ type: CreatedWebhookSchema })
  @ApiErrors()
  create(@Auth() auth: AuthContext, @Body() body: NewWebhookDto): Promise<CreatedWebhookSchema> {
    return this.webhooks.create(auth.accountId, body);
  }

  @Get()
  @ApiExtension('x-stability', 'experimental')
  @ApiOperation({ operationId: 'listWebhooks', summary: 'The account’s webhooks (never their secrets)' })
  @ApiOkResponse({ type: [WebhookSchema] })
  @ApiErrors()
  list(@Auth() auth: AuthContext): Promise<WebhookView[]> {
    return this.webhooks.list(auth.accountId);
  }

  @Delete(':webhookId')
  @HttpCode(204)
  @ApiExtension('x-stability', 'experimental')
  @ApiOperation({ operationId: 'deleteWebhook', summary: 'Delete a webhook; its pending deliveries stop' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors()
  async remove(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<void> {
    await this.webhooks.remove(auth.accountId, webhookId);
  }

  @Post(':webhookId/enable')
  @HttpCode(200)
  @ApiExtension('x-stability', 'experimental')
  @ApiOperation({
    operationId: 'enableWebhook',
    summary:
      'Re-enable a webhook disabled after failing deliveries: events from now on are delivered again; ' +
      'those that failed meanwhile are not resent',
  })
  @ApiOkResponse({ type: WebhookSchema })
  @ApiErrors()
  enable(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<WebhookView> {
    return this.webhooks.enable(auth.accountId, webhookId);
  }

  @Get(':webhookId/deliveries')
  @ApiExtension('x-stability', 'experimental')
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'Deliveries to a webhook, oldest first: attempts, last status code, next retry',
  })
  @ApiOkResponse({ type: [DeliverySchema], headers: LINK_HEADER })
  @ApiErrors()
  async deliveries(
    @Auth() auth: AuthContext,
    @Param('webhookId', ParseIdPipe) webhookId: number,
    @Query() query: PageQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DeliveryView[]> {
    const rows = await this.webhooks.deliveries(auth.accountId, webhookId, query);
    return page(res, `/v1/webhooks/${webhookId}/deliveries`, query, rows);
  }

  @Post(':webhookId/test')
  @HttpCode(202)
  @ApiExtension('x-stability', 'experimental')
  @ApiOperation({
    operationId: 'testWebhook',
    summary: 'Queue a signed `webhook.test` delivery (one attempt); follow it in the deliveries',
  })
  @ApiAcceptedResponse({ type: DeliverySchema })
  @ApiErrors()
  test(@Auth() auth: AuthContext, @Param('webhookId', ParseIdPipe) webhookId: number): Promise<DeliveryView> {
    return this.webhooks.test(auth.accountId, webhookId);
  }
}
