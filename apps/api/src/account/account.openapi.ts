// The OpenAPI text of AccountController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { AccountView } from './account.dto';

export const GetAccountDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getAccount',
      summary: 'The account of the calling key, with its plan limits',
      description:
        'The account the API key belongs to: its plan and the per-minute and per-day request limits of that plan. Use it to check which key you are using.',
    }),
    ApiOkResponse({ type: AccountView }),
    ApiErrors(),
  );
