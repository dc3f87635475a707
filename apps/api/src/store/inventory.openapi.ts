// The OpenAPI text of InventoryController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from '../common/etag';
import { InventoryItemSchema } from './store.dto';

export const ListInventoryDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listInventory',
      summary: 'Stock and status of each pet, by pet id (keyset pages)',
      description:
        'Stock and derived status of each pet, by pet id in keyset pages, optionally filtered by status. Follow `Link: rel="next"` for the next page.',
    }),
    ApiOkResponse({ type: [InventoryItemSchema], description: 'A page; `Link: <...>; rel="next"` when there is more' }),
  );

export const GetInventoryItemDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getInventoryItem',
      summary: "One pet's stock and status",
      description: 'Stock and derived status of one pet, with its ETag (If-None-Match gives 304).',
    }),
    ApiOkResponse({ type: InventoryItemSchema }),
    ApiHeader(IF_NONE_MATCH_HEADER),
  );

export const UpdateInventoryItemDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'updateInventoryItem',
      summary: "Set a pet's stock; its status follows",
      description:
        'Sets the number of units in stock of a pet; its status follows (`available` with stock, `sold` without, `pending` while orders are open). With If-Match, only if the ETag still matches (412 otherwise).',
    }),
    ApiOkResponse({ type: InventoryItemSchema }),
    ApiHeader(IF_MATCH_HEADER),
    ApiErrors(412),
  );
