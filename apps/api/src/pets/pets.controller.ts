import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthContext } from '@app/access';
import { AppConfig, Clock } from '@app/config';
import { ApiError, ParseIdPipe } from '@app/errors';
import { PetView } from '@app/catalog';
import { created } from '../common/created';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, taggedJson } from '../common/etag';
import { page } from '../common/pagination';
import { NewPetDto, PetListQuery, PetSchema, PetUpdateDto } from './pets.dto';
import { PetsService } from '@app/catalog';
import { ApiCreatedAt } from '../openapi/location-header';
import { Policy } from '../policy/route-policy.decorator';

/** When GET /pets/{petId} was deprecated in favour of GET /pets?ids= (RFC 9745 `@<unix seconds>`). */
export const PET_GET_DEPRECATED_AT = new Date('2025-11-21T00:00:00Z');

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

  @Get()
  @Policy({ scope: 'read' })
  @ApiOperation({
    operationId: 'listPets',
    summary: 'Pets by id (keyset pages), filtered by status, category, name or ids',
    description:
      'The account\'s pets in id order, in keyset pages, optionally filtered by status, category, name (a case-insensitive substring of at least 3 characters) or a list of ids (`ids=1,2,3`, which replaces GET /pets/{petId}). Follow `Link: rel="next"` for the next page: a page without it is the last, and a name search answers its matches on the first page however large the catalogue.',
  })
  @ApiOkResponse({ type: [PetSchema], description: 'A page (the Pets model); `Link: <...>; rel="next"` when more' })
  async list(
    @Auth() auth: AuthContext,
    @Query() query: PetListQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetView[]> {
    return page(res, '/v1/pets', query, await this.pets.list(auth.accountId, query));
  }

  @Post()
  @Policy({ scope: 'write', idempotent: 'account' })
  @ApiOperation({
    operationId: 'createPet',
    summary: 'Add a pet: 1 unit in stock (available) or none (sold)',
    description:
      'Adds a pet to a category of the account. `available` (the default) puts one unit in stock; `sold` puts none. An unknown category is 400. Send an Idempotency-Key so a retry does not add the pet twice.',
  })
  @ApiCreatedAt(PetSchema, '/v1/pets/{petId}')
  async create(
    @Auth() auth: AuthContext,
    @Body() body: NewPetDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetView> {
    return created(this.idempotency, res, '/v1/pets', () => this.pets.create(auth.accountId, body));
  }

  @Get(':petId')
  @Policy({ scope: 'read', deprecated: true })
  @ApiOperation({
    operationId: 'getPet',
    summary: 'One pet (deprecated: use GET /pets?ids={petId}); 410 after the sunset date',
    description:
      'One pet, with its ETag. Deprecated in favour of GET /pets?ids={petId}: answers carry `Deprecation`, `Sunset` and a `Link` to the successor, and after the sunset date (`x-sunset`) the operation answers 410 `endpoint_sunset`.',
  })
  @ApiOkResponse({
    type: PetSchema,
    headers: {
      Deprecation: { description: 'RFC 9745: `@<unix seconds>` of the deprecation', schema: { type: 'string' } },
      Sunset: { description: 'RFC 8594: HTTP-date after which the operation answers 410', schema: { type: 'string' } },
      Link: { description: '`</v1/pets?ids={petId}>; rel="successor-version"`', schema: { type: 'string' } },
      ETag: { description: 'Entity tag of the pet', schema: { type: 'string' } },
    },
  })
  @ApiHeader(IF_NONE_MATCH_HEADER)
  @ApiErrors(410)
  async getOne(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) id: number,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string | undefined> {
    const link = `</v1/pets?ids=${id}>; rel="successor-version"`;
    if (this.clock.nowMs() >= this.config.petGetSunsetAt.getTime()) {
      throw new ApiError('endpoint_sunset', 'GET /pets/{petId} is past its sunset; use GET /pets?ids=', undefined, {
        ...this.deprecation,
        Link: link,
      });
    }
    res.setHeader('Deprecation', this.deprecation.Deprecation);
    res.setHeader('Sunset', this.deprecation.Sunset);
    res.setHeader('Link', link);
    return taggedJson(res, await this.pets.get(auth.accountId, id));
  }

  @Patch(':petId')
  @Policy({ scope: 'write' })
  @ApiOperation({
    operationId: 'updatePet',
    summary: 'Change a pet (a status sets the stock it implies)',
    description:
      'Changes the fields sent. A status sets the stock it implies (`available`: at least one unit, `sold`: none); `pending` is derived from open orders and cannot be sent. With If-Match, only if the ETag still matches (412 otherwise).',
  })
  @ApiOkResponse({ type: PetSchema })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiErrors(412)
  async update(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) id: number,
    @Body() body: PetUpdateDto,
    @Res({ passthrough: true }) res: Response,
    @Headers('if-match') ifMatch?: string,
  ): Promise<string | undefined> {
    return taggedJson(res, await this.pets.update(auth.accountId, id, body, ifMatch));
  }

  @Delete(':petId')
  @Policy({ scope: 'write' })
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deletePet',
    summary: 'Delete a pet without open orders (else 409 pet_has_open_orders)',
    description:
      'Deletes a pet with no open orders; otherwise 409 `pet_has_open_orders` (cancel or let them complete first). With If-Match, only if the ETag still matches (412 otherwise).',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiErrors(409, 412)
  async remove(
    @Auth() auth: AuthContext,
    @Param('petId', ParseIdPipe) id: number,
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    await this.pets.remove(auth.accountId, id, ifMatch);
  }
}
