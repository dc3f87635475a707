import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthContext } from '@app/access';
import { AppConfig, Clock } from '@app/config';
import { ApiError, ParseIdPipe } from '@app/errors';
import { PetView } from '@app/catalog';
import { created } from '../common/created';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Auth, authOf } from '../gate/auth.decorator';
import { taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { NewPetDto, PetListQuery, PetUpdateDto } from './pets.dto';
import { PetsService } from '@app/catalog';
import { Policy } from '../policy/route-policy.decorator';
import { ListPetsDocs, CreatePetDocs, GetPetDocs, UpdatePetDocs, DeletePetDocs } from './pets.openapi';

/** When GET /pets/{petId} was deprecated in favour of GET /pets?ids= (RFC 9745 `@<unix seconds>`). */
export const PET_GET_DEPRECATED_AT = new Date('2025-11-21T00:00:00Z');

const PET_ID = new ParseIdPipe();
const PET_ID_PARAM = { type: 'param', data: 'petId' } as const;

@ApiTags('Pets')
@Controller('pets')
export class PetsController {
  /** RFC 9745 and RFC 8594 headers of GET /pets/{petId}, the same on every answer. */
  private readonly deprecation: { Deprecation: string; Sunset: string };

  constructor(
    private readonly pets: PetsService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly idempotency: IdempotencyService,
  ) {
    this.deprecation = {
      Deprecation: `@${Math.floor(PET_GET_DEPRECATED_AT.getTime() / 1000)}`,
      Sunset: config.petGetSunsetAt.toUTCString(),
    };
  }

  // The two reads take the key from res.locals and the id from the path themselves: Nest settles every
  // parameter a pipe may see through promises of its own (docs/internals/decisions/0043-no-parameter-pipes-on-hot-routes.md).
  @Get()
  @Policy({ scope: 'read' })
  @ListPetsDocs()
  async list(@Query() query: PetListQuery, @Res({ passthrough: true }) res: FastifyReply): Promise<PetView[]> {
    return page(res, '/v1/pets', query, await this.pets.list(authOf(res).accountId, query));
  }

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @CreatePetDocs()
  async create(
    @Auth() auth: AuthContext,
    @Body() body: NewPetDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<PetView> {
    return created(this.idempotency, res, '/v1/pets', () => this.pets.create(auth.accountId, body));
  }

  @Get(':petId')
  @Policy({ scope: 'read', deprecated: true })
  @GetPetDocs()
  async getOne(@Res({ passthrough: true }) res: FastifyReply): Promise<string | undefined> {
    const id = PET_ID.transform((res.request.params as { petId: string }).petId, PET_ID_PARAM);
    const link = `</v1/pets?ids=${id}>; rel="successor-version"`;
    if (this.clock.nowMs() >= this.config.petGetSunsetAt.getTime()) {
      throw new ApiError('endpoint_sunset', 'GET /pets/{petId} is past its sunset; use GET /pets?ids=', undefined, {
        ...this.deprecation,
        Link: link,
      });
    }
    res.header('Deprecation', this.deprecation.Deprecation);
    res.header('Sunset', this.deprecation.Sunset);
    res.header('Link', link);
    return taggedJson(res, await this.pets.get(authOf(res).accountId, id));
  }

  @Patch(':petId')
  @Policy({ scope: 'write' })
  @UpdatePetDocs()
  async update(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) id: number,
    @Body() body: PetUpdateDto,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('if-match') ifMatch?: string,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.pets.update(auth.accountId, id, body, ifMatch));
  }

  @Delete(':petId')
  @Policy({ scope: 'write' })
  @HttpCode(204)
  @DeletePetDocs()
  async remove(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    await this.pets.remove(auth.accountId, id, ifMatch);
  }
}
