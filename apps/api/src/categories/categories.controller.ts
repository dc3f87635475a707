import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Auth } from '../gate/auth.decorator';
import { taggedJson } from '../common/etag';
import { created } from '../common/created';
import { page, PageQuery } from '../common/pagination';
import { CategoryUpdateDto, NewCategoryDto } from './categories.dto';
import { CategoriesService, CategoryView } from '@app/catalog';
import { Policy } from '../policy/route-policy.decorator';
import {
  ListCategoriesDocs,
  CreateCategoryDocs,
  GetCategoryDocs,
  UpdateCategoryDocs,
  DeleteCategoryDocs,
} from './categories.openapi';

@ApiTags('Pets')
@Controller('categories')
export class CategoriesController {
  constructor(
    private readonly categories: CategoriesService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @Policy({ scope: 'read' })
  @ListCategoriesDocs()
  async list(
    @Auth() auth: AuthContext,
    @Query() query: PageQuery,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<CategoryView[]> {
    return page(res, '/v1/categories', query, await this.categories.list(auth.accountId, query));
  }

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @CreateCategoryDocs()
  async create(
    @Auth() auth: AuthContext,
    @Body() body: NewCategoryDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<CategoryView> {
    return created(this.idempotency, res, '/v1/categories', () => this.categories.create(auth.accountId, body));
  }

  @Get(':categoryId')
  @Policy({ scope: 'read' })
  @GetCategoryDocs()
  async getOne(
    @Auth() auth: AuthContext,
    @Param('categoryId', ParseIdPipe) id: number,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.categories.get(auth.accountId, id));
  }

  @Patch(':categoryId')
  @Policy({ scope: 'write' })
  @UpdateCategoryDocs()
  async update(
    @Auth() auth: AuthContext,
    @Param('categoryId', ParseIdPipe) id: number,
    @Body() body: CategoryUpdateDto,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('if-match') ifMatch?: string,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.categories.update(auth.accountId, id, body, ifMatch));
  }

  @Delete(':categoryId')
  @Policy({ scope: 'write' })
  @HttpCode(204)
  @DeleteCategoryDocs()
  async remove(
    @Auth() auth: AuthContext,
    @Param('categoryId', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    await this.categories.remove(auth.accountId, id, ifMatch);
  }
}
