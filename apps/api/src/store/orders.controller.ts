import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { OrderView } from '@app/store';
import { created } from '../common/created';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Auth } from '../gate/auth.decorator';
import { taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { OrdersService } from '@app/store';
import { NewOrderDto, OrderListQuery } from './store.dto';
import { Policy } from '../policy/route-policy.decorator';
import { ListOrdersDocs, PlaceOrderDocs, GetOrderDocs, CancelOrderDocs } from './orders.openapi';

@ApiTags('Store')
@Controller('store/orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @Policy({ scope: 'read' })
  @ListOrdersDocs()
  async list(
    @Auth() auth: AuthContext,
    @Query() query: OrderListQuery,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<OrderView[]> {
    return page(res, '/v1/store/orders', query, await this.orders.list(auth.accountId, query));
  }

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @PlaceOrderDocs()
  async place(
    @Auth() auth: AuthContext,
    @Body() body: NewOrderDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<OrderView> {
    return created(this.idempotency, res, '/v1/store/orders', () => this.orders.place(auth.accountId, body));
  }

  @Get(':orderId')
  @Policy({ scope: 'read' })
  @GetOrderDocs()
  async get(
    @Auth() auth: AuthContext,
    @Param('orderId', ParseIdPipe) id: number,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.orders.get(auth.accountId, id));
  }

  @Delete(':orderId')
  @Policy({ scope: 'write' })
  @HttpCode(204)
  @CancelOrderDocs()
  async cancel(
    @Auth() auth: AuthContext,
    @Param('orderId', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    await this.orders.cancel(auth.accountId, id, ifMatch);
  }
}
