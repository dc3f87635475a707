import { Body, Controller, Get, Headers, Param, Put, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { InventoryItemView } from '@app/store';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { InventoryService } from '@app/store';
import { InventoryItemSchema, InventoryListQuery, InventoryUpdateDto } from './store.dto';
import { Policy } from '../policy/route-policy.decorator';

@ApiTags('Store')
@Controller('store/inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get()
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'listInventory',
    summary: 'Stock and status of each pet, by pet id (keyset pages)',
    description:
      'Stock and derived status of each pet, by pet id in keyset pages, optionally filtered by status. Follow `Link: rel="next"` for the next page.',
  })
  @ApiOkResponse({ type: [InventoryItemSchema], description: 'A page; `Link: <...>; rel="next"` when there is more' })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: InventoryListQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<InventoryItemView[]> {
    const items = await this.inventory.list(auth.accountId, query);
    return page(res, '/v1/store/inventory', query, items, (item) => item.petId);
  }

  @Get(':petId')
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'getInventoryItem',
    summary: "One pet's stock and status",
    description: 'Stock and derived status of one pet, with its ETag (If-None-Match gives 304).',
  })
  @ApiOkResponse({ type: InventoryItemSchema })
  @ApiHeader(IF_NONE_MATCH_HEADER)
  async get(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) petId: number,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.inventory.get(auth.accountId, petId));
  }

  @Put(':petId')
  @Policy({ scope: 'write' })
  @ApiOperation({
    operationId: 'updateInventoryItem',
    summary: "Set a pet's stock; its status follows",
    description:
      'Sets the number of units in stock of a pet; its status follows (`available` with stock, `sold` without, `pending` while orders are open). With If-Match, only if the ETag still matches (412 otherwise).',
  })
  @ApiOkResponse({ type: InventoryItemSchema })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiErrors(412)
  async set(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) petId: number,
    @Body() body: InventoryUpdateDto,
    @Res({ passthrough: true }) res: Response,
    @Headers('if-match') ifMatch?: string,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.inventory.set(auth.accountId, petId, body.quantity, ifMatch));
  }
}
