import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, taggedJson } from '../common/etag';
import { created } from '../common/created';
import { page, PageQuery } from '../common/pagination';
import { CategorySchema, CategoryUpdateDto, NewCategoryDto } from './categories.dto';
import { CategoriesService, CategoryView } from '@app/catalog';
import { ApiCreatedAt } from '../openapi/location-header';
import { Policy } from '../policy/route-policy.decorator';

@ApiTags('Pets')
@Controller('categories')
export class CategoriesController {
  constructor(
    private readonly categories: CategoriesService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'listCategories',
    summary: 'Categories of the account, by id (keyset pages)',
    description:
      'The account\'s categories in id order, in keyset pages: pass `limit`, then follow the `Link: rel="next"` header until an answer has none.',
  })
  @ApiOkResponse({ type: [CategorySchema], description: 'A page; `Link: <...>; rel="next"` when there is more' })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: PageQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CategoryView[]> {
    return page(res, '/v1/categories', query, await this.categories.list(auth.accountId, query));
  }

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @ApiOperation({
    operationId: 'createCategory',
    summary: 'Create a category (names unique per account, any case)',
    description:
      'Creates a category. Names are unique within the account regardless of case: a duplicate is 409 `category_exists`. Send an Idempotency-Key so a retry does not create a second one.',
  })
  @ApiCreatedAt(CategorySchema, '/v1/categories/{categoryId}')
  @ApiErrors(409)
  async create(
    @Auth() auth: AuthContext,
    @Body() body: NewCategoryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CategoryView> {
    return created(this.idempotency, res, '/v1/categories', () => this.categories.create(auth.accountId, body));
  }

  @Get(':categoryId')
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'getCategory',
    summary: 'One category (with ETag; If-None-Match gives 304)',
    description:
      'One category of the account, with its ETag. Send the ETag back in If-None-Match to get 304 when it has not changed, or in If-Match to update or delete it safely.',
  })
  @ApiOkResponse({ type: CategorySchema })
  @ApiHeader(IF_NONE_MATCH_HEADER)
  async getOne(
    @Auth() auth: AuthContext,
    @Param('categoryId', ParseIdPipe) id: number,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.categories.get(auth.accountId, id));
  }

  @Patch(':categoryId')
  @Policy({ scope: 'write' })
  @ApiOperation({
    operationId: 'updateCategory',
    summary: 'Change a category',
    description:
      'Changes the fields sent (only `name` today). With If-Match the change is made only if the category still has that ETag (412 otherwise). A name another category has, in any case, is 409 `category_exists`.',
  })
  @ApiOkResponse({ type: CategorySchema })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiErrors(409, 412)
  async update(
    @Auth() auth: AuthContext,
    @Param('categoryId', ParseIdPipe) id: number,
    @Body() body: CategoryUpdateDto,
    @Res({ passthrough: true }) res: Response,
    @Headers('if-match') ifMatch?: string,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.categories.update(auth.accountId, id, body, ifMatch));
  }

  @Delete(':categoryId')
  @Policy({ scope: 'write' })
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteCategory',
    summary: 'Delete a category no pet uses (else 409 category_in_use)',
    description:
      'Deletes a category no pet uses; one still in use is 409 `category_in_use` (move or delete its pets first). With If-Match, only if the ETag still matches (412 otherwise).',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiErrors(409, 412)
  async remove(
    @Auth() auth: AuthContext,
    @Param('categoryId', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    await this.categories.remove(auth.accountId, id, ifMatch);
  }
}
