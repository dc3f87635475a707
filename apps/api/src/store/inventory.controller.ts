import { Body, Controller, Get, Headers, Param, Put, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { InventoryItemView } from '@app/store';
import { Auth } from '../gate/auth.decorator';
import { taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { InventoryService } from '@app/store';
import { InventoryListQuery, InventoryUpdateDto } from './store.dto';
import { Policy } from '../policy/route-policy.decorator';
import { ListInventoryDocs, GetInventoryItemDocs, UpdateInventoryItemDocs } from './inventory.openapi';

@ApiTags('Store')
@Controller('store/inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get()
  @Policy({ scope: 'read' })
  @ListInventoryDocs()
  async list(
    @Auth() auth: AuthContext,
    @Query() query: InventoryListQuery,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<InventoryItemView[]> {
    const items = await this.inventory.list(auth.accountId, query);
    return page(res, '/v1/store/inventory', query, items, (item) => item.petId);
  }

  @Get(':petId')
  @Policy({ scope: 'read' })
  @GetInventoryItemDocs()
  async get(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) petId: number,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.inventory.get(auth.accountId, petId));
  }

  @Put(':petId')
  @Policy({ scope: 'write' })
  @UpdateInventoryItemDocs()
  async set(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) petId: number,
    @Body() body: InventoryUpdateDto,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('if-match') ifMatch?: string,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.inventory.set(auth.accountId, petId, body.quantity, ifMatch));
  }
}
