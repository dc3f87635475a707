import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/auth';
import { ParseIdPipe } from '@app/errors';
import { OrderView } from '@app/store';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { OrdersService } from './orders.service';
import { NewOrderDto, OrderListQuery, OrderSchema } from './store.dto';

@ApiTags('Store')
@Controller('store/orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'listOrders', summary: 'Orders of the account, by id (keyset pages)' })
  @ApiOkResponse({ type: [OrderSchema], description: 'A page; `Link: <...>; rel="next"` when there is more' })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: OrderListQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<OrderView[]> {
    return page(res, '/v1/store/orders', query, await this.orders.list(auth.accountId, query));
  }

  @Post()
  @Idempotent()
  @ApiOperation({
    operationId: 'placeOrder',
    summary: 'Order units of a pet: stock is taken at once; the worker fulfils at the ship date',
  })
  @ApiCreatedResponse({ type: OrderSchema, description: 'Placed (`complete: false`); `Location` names it' })
  @ApiErrors(409)
  async place(
    @Auth() auth: AuthContext,
    @Body() body: NewOrderDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<OrderView> {
    return this.idempotency.run(res, async () => {
      const order = await this.orders.place(auth.accountId, body);
      res.setHeader('Location', `/v1/store/orders/${order.id}`);
      return order;
    });
  }

  @Get(':orderId')
  @ApiOperation({ operationId: 'getOrder', summary: 'One order' })
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
  @HttpCode(204)
  @ApiOperation({
    operationId: 'cancelOrder',
    summary: 'Cancel an open order: its units return to stock (409 order_not_cancellable once complete)',
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
