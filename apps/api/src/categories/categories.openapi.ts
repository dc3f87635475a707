// The OpenAPI text of CategoriesController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiErrorResponse, ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from '../common/etag';
import { CategorySchema } from './categories.dto';
import { ApiCreatedAt } from '../openapi/location-header';

export const ListCategoriesDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listCategories',
      summary: 'Categories of the account, by id (keyset pages)',
      description:
        'The account\'s categories in id order, in keyset pages: pass `limit`, then follow the `Link: rel="next"` header until an answer has none.',
    }),
    ApiOkResponse({ type: [CategorySchema], description: 'A page; `Link: <...>; rel="next"` when there is more' }),
  );

const CATEGORY_EXISTS = 'Another category of the account has this name, in any case (category_exists)';

export const CreateCategoryDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'createCategory',
      summary: 'Create a category (names unique per account, any case)',
      description:
        'Creates a category. Names are unique within the account regardless of case: a duplicate is 409 `category_exists`. Send an Idempotency-Key so a retry does not create a second one.',
    }),
    ApiCreatedAt(CategorySchema, '/v1/categories/{categoryId}'),
    ApiErrorResponse(409, CATEGORY_EXISTS),
  );

export const GetCategoryDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getCategory',
      summary: 'One category (with ETag; If-None-Match gives 304)',
      description:
        'One category of the account, with its ETag. Send the ETag back in If-None-Match to get 304 when it has not changed, or in If-Match to update or delete it safely.',
    }),
    ApiOkResponse({ type: CategorySchema }),
    ApiHeader(IF_NONE_MATCH_HEADER),
  );

export const UpdateCategoryDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'updateCategory',
      summary: 'Change a category',
      description:
        'Changes the fields sent (only `name` today). With If-Match the change is made only if the category still has that ETag (412 otherwise). A name another category has, in any case, is 409 `category_exists`.',
    }),
    ApiOkResponse({ type: CategorySchema }),
    ApiHeader(IF_MATCH_HEADER),
    ApiErrorResponse(409, CATEGORY_EXISTS),
    ApiErrors(412),
  );

export const DeleteCategoryDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'deleteCategory',
      summary: 'Delete a category no pet uses (else 409 category_in_use)',
      description:
        'Deletes a category no pet uses; one still in use is 409 `category_in_use` (move or delete its pets first). With If-Match, only if the ETag still matches (412 otherwise).',
    }),
    ApiNoContentResponse({ description: 'Deleted' }),
    ApiHeader(IF_MATCH_HEADER),
    ApiErrorResponse(409, 'Pets belong to the category; move or delete them first (category_in_use)'),
    ApiErrors(412),
  );
