// The OpenAPI text of OrdersController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiErrorResponse, ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from '../common/etag';
import { OrderSchema } from './store.dto';
import { ApiCreatedAt } from '../openapi/location-header';

export const ListOrdersDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listOrders',
      summary: 'Orders of the account, by id (keyset pages)',
      description:
        'The account\'s orders in id order, in keyset pages, optionally filtered by pet or completion. Follow `Link: rel="next"` for the next page.',
    }),
    ApiOkResponse({ type: [OrderSchema], description: 'A page; `Link: <...>; rel="next"` when there is more' }),
  );

export const PlaceOrderDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'placeOrder',
      summary: 'Order units of a pet: stock is taken at once; the worker fulfils at ship date',
      description:
        'Orders units of a pet. The stock is taken at once (409 `insufficient_stock` when it cannot be); the worker completes the order at its ship date and emits `order.completed`. Send an Idempotency-Key: a retry with the same key never places a second order.',
    }),
    ApiCreatedAt(OrderSchema, '/v1/store/orders/{orderId}', 'Placed (`complete: false`); `Location` names it'),
    ApiErrorResponse(409, 'The pet has fewer units in stock than `quantity` (insufficient_stock)'),
  );

export const GetOrderDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getOrder',
      summary: 'One order',
      description: 'One order of the account, with its ETag (If-None-Match gives 304).',
    }),
    ApiOkResponse({ type: OrderSchema }),
    ApiHeader(IF_NONE_MATCH_HEADER),
  );

export const CancelOrderDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'cancelOrder',
      summary: 'Cancel an open order: its units return to stock',
      description:
        "Cancels an open order; its units return to the pet's stock. A completed order is 409 `order_not_cancellable`. With If-Match, only if the ETag still matches (412 otherwise).",
    }),
    ApiNoContentResponse({ description: 'Cancelled' }),
    ApiHeader(IF_MATCH_HEADER),
    ApiErrorResponse(409, 'The order is complete and can no longer be cancelled (order_not_cancellable)'),
    ApiErrors(412),
  );
