import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiTags } from '@nestjs/swagger';
import { ApiKeysService, ApiKeyView, assertManages, AuthContext, IssuedApiKey } from '@app/access';
import { ParseIdPipe } from '@app/errors';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { NewApiKeyDto, RotateApiKeyDto } from './keys.dto';
import { Policy } from '../policy/route-policy.decorator';
import { ListApiKeysDocs, CreateApiKeyDocs, RevokeApiKeyDocs, RotateApiKeyDocs } from './keys.openapi';

@ApiTags('Keys')
@ApiErrors(403)
@Controller('keys')
export class KeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  @Policy({ scope: 'admin' })
  @ListApiKeysDocs()
  list(@Auth() auth: AuthContext): Promise<ApiKeyView[]> {
    return this.keys.list(auth.accountId, auth);
  }

  @Post()
  @Policy({ scope: 'admin', idempotent: 'same-key' })
  @Header('Cache-Control', 'no-store') // the answer carries a secret
  @CreateApiKeyDocs()
  create(
    @Auth() auth: AuthContext,
    @Body() body: NewApiKeyDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<IssuedApiKey> {
    // The scope is checked before a stored answer (with its secret) could be replayed.
    assertManages(auth);
    return this.idempotency.run(res, () => this.keys.create(auth.accountId, body, auth));
  }

  @Delete(':keyId')
  @Policy({ scope: 'admin' })
  @HttpCode(204)
  @RevokeApiKeyDocs()
  async revoke(@Auth() auth: AuthContext, @Param('keyId', ParseIdPipe) keyId: number): Promise<void> {
    await this.keys.revoke(auth.accountId, keyId, auth);
  }

  @Post(':keyId/rotate')
  @Policy({ scope: 'admin', idempotent: 'same-key' })
  @Header('Cache-Control', 'no-store') // the answer carries a secret
  @RotateApiKeyDocs()
  rotate(
    @Auth() auth: AuthContext,
    @Param('keyId', ParseIdPipe) keyId: number,
    @Body() body: RotateApiKeyDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<IssuedApiKey> {
    // As for create.
    assertManages(auth);
    return this.idempotency.run(res, () => this.keys.rotate(auth.accountId, keyId, body.gracePeriodSeconds, auth));
  }
}
