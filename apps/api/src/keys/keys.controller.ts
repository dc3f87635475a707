import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiKeysService, ApiKeyView, AuthContext, IssuedApiKey } from '@app/auth';
import { ParseIdPipe } from '@app/errors';
import { Auth } from '../gate/auth.decorator';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ApiKeySchema, IssuedApiKeySchema, NewApiKeyDto, RotateApiKeyDto } from './keys.dto';

@ApiTags('Keys')
@Controller('keys')
export class KeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: 'The active keys of the account (never their secrets)' })
  @ApiOkResponse({ type: [ApiKeySchema] })
  list(@Auth() auth: AuthContext): Promise<ApiKeyView[]> {
    return this.keys.list(auth.accountId);
  }

  @Post()
  @Idempotent()
  @ApiOperation({ operationId: 'createApiKey', summary: 'Issue a key; the secret is in this answer only' })
  @ApiCreatedResponse({ type: IssuedApiKeySchema })
  create(
    @Auth() auth: AuthContext,
    @Body() body: NewApiKeyDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<IssuedApiKey> {
    return this.idempotency.run(res, () => this.keys.create(auth.accountId, body));
  }

  @Delete(':keyId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke a key; every replica refuses it within a second' })
  @ApiNoContentResponse({ description: 'Revoked' })
  async revoke(@Auth() auth: AuthContext, @Param('keyId', ParseIdPipe) keyId: number): Promise<void> {
    await this.keys.revoke(auth.accountId, keyId);
  }

  @Post(':keyId/rotate')
  @ApiBody({
    type: RotateApiKeyDto,
    required: false,
    description: 'Optional: without a body the default grace period applies',
  })
  @ApiOperation({
    operationId: 'rotateApiKey',
    summary: 'New secret with the same scopes and expiry; the old one works for the grace period',
  })
  @ApiCreatedResponse({ type: IssuedApiKeySchema })
  rotate(
    @Auth() auth: AuthContext,
    @Param('keyId', ParseIdPipe) keyId: number,
    @Body() body: RotateApiKeyDto,
  ): Promise<IssuedApiKey> {
    return this.keys.rotate(auth.accountId, keyId, body.gracePeriodSeconds);
  }
}
