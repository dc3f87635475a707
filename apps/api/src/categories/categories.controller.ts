import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
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
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, taggedJson } from '../common/etag';
import { page, PageQuery } from '../common/pagination';
import { CategorySchema, CategoryUpdateDto, CategoryView, NewCategoryDto } from './categories.dto';
import { CategoriesService } from './categories.service';

@ApiTags('Pets')
@Controller('categories')
export class CategoriesController {
  constructor(
    private readonly categories: CategoriesService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'listCategories', summary: 'Categories of the account, by id (keyset pages)' })
  @ApiOkResponse({ type: [CategorySchema], description: 'A page; `Link: <...>; rel="next"` when there is more' })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: PageQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CategoryView[]> {
    return page(res, '/v1/categories', query, await this.categories.list(auth.accountId, query));
  }

  @Post()
  @Idempotent()
  @ApiOperation({ operationId: 'createCategory', summary: 'Create a category (names unique per account, any case)' })
  @ApiCreatedResponse({ type: CategorySchema, description: 'Created; `Location` names it' })
  @ApiErrors(409)
  async create(
    @Auth() auth: AuthContext,
    @Body() body: NewCategoryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CategoryView> {
    return this.idempotency.run(res, async () => {
      const category = await this.categories.create(auth.accountId, body);
      res.setHeader('Location', `/v1/categories/${category.id}`);
      return category;
    });
  }

  @Get(':categoryId')
  @ApiOperation({ operationId: 'getCategory', summary: 'One category (with ETag; If-None-Match gives 304)' })
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
  @ApiOperation({ operationId: 'updateCategory', summary: 'Change a category' })
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
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteCategory', summary: 'Delete a category no pet uses (else 409 category_in_use)' })
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
