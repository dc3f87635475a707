import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { OrderView } from '@app/store';
import { created } from '../common/created';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { OrdersService } from '@app/store';
import { NewOrderDto, OrderListQuery, OrderSchema } from './store.dto';
import { ApiCreatedAt } from '../openapi/location-header';
import { Policy } from '../policy/route-policy.decorator';

@ApiTags('Store')
@Controller('store/orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'Orders of the account, by id (keyset pages)',
    description:
      'The account\'s orders in id order, in keyset pages, optionally filtered by pet or completion. Follow `Link: rel="next"` for the next page.',
  })
  @ApiOkResponse({ type: [OrderSchema], description: 'A page; `Link: <...>; rel="next"` when there is more' })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: OrderListQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<OrderView[]> {
    return page(res, '/v1/store/orders', query, await this.orders.list(auth.accountId, query));
  }

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @ApiOperation({
    operationId: 'placeOrder',
    summary: 'Order units of a pet: stock is taken at once; the worker fulfils at ship date',
    description:
      'Orders units of a pet. The stock is taken at once (409 `insufficient_stock` when it cannot be); the worker completes the order at its ship date and emits `order.completed`. Send an Idempotency-Key: a retry with the same key never places a second order.',
  })
  @ApiCreatedAt(OrderSchema, '/v1/store/orders/{orderId}', 'Placed (`complete: false`); `Location` names it')
  @ApiErrors(409)
  async place(
    @Auth() auth: AuthContext,
    @Body() body: NewOrderDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<OrderView> {
    return created(this.idempotency, res, '/v1/store/orders', () => this.orders.place(auth.accountId, body));
  }

  @Get(':orderId')
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'getOrder',
    summary: 'One order',
    description: 'One order of the account, with its ETag (If-None-Match gives 304).',
  })
  @ApiOkResponse({ type: OrderSchema })
  @ApiHeader(IF_NONE_MATCH_HEADER)
  async get(
    @Auth() auth: AuthContext,
    @Param('orderId', ParseIdPipe) id: number,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.orders.get(auth.accountId, id));
  }

  @Delete(':orderId')
  @Policy({ scope: 'write' })
  @HttpCode(204)
  @ApiOperation({
    operationId: 'cancelOrder',
    summary: 'Cancel an open order: its units return to stock',
    description:
      "Cancels an open order; its units return to the pet's stock. A completed order is 409 `order_not_cancellable`. With If-Match, only if the ETag still matches (412 otherwise).",
  })
  @ApiNoContentResponse({ description: 'Cancelled' })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiErrors(409, 412)
  async cancel(
    @Auth() auth: AuthContext,
    @Param('orderId', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    await this.orders.cancel(auth.accountId, id, ifMatch);
  }
}
