// The OpenAPI text of PetsController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { ApiErrorResponse, ApiErrors } from '../openapi/api-errors.decorator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from '../common/etag';
import { PetSchema } from './pets.dto';
import { ApiCreatedAt } from '../openapi/location-header';

export const ListPetsDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listPets',
      summary: 'Pets by id (keyset pages), filtered by status, category, name or ids',
      description:
        'The account\'s pets in id order, in keyset pages, optionally filtered by status, category, name (a case-insensitive substring of at least 3 characters) or a list of ids (`ids=1,2,3`, which replaces GET /pets/{petId}). Follow `Link: rel="next"` for the next page: a page without it is the last, and a name search answers its matches on the first page however large the catalogue.',
    }),
    ApiOkResponse({ type: [PetSchema], description: 'A page (the Pets model); `Link: <...>; rel="next"` when more' }),
  );

export const CreatePetDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'createPet',
      summary: 'Add a pet: 1 unit in stock (available) or none (sold)',
      description:
        'Adds a pet to a category of the account. `available` (the default) puts one unit in stock; `sold` puts none. An unknown category is 400. Send an Idempotency-Key so a retry does not add the pet twice.',
    }),
    ApiCreatedAt(PetSchema, '/v1/pets/{petId}'),
  );

export const GetPetDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getPet',
      summary: 'One pet (deprecated: use GET /pets?ids={petId}); 410 after the sunset date',
      description:
        'One pet, with its ETag. Deprecated in favour of GET /pets?ids={petId}: answers carry `Deprecation`, `Sunset` and a `Link` to the successor, and after the sunset date (`x-sunset`) the operation answers 410 `endpoint_sunset`.',
    }),
    ApiOkResponse({
      type: PetSchema,
      headers: {
        Deprecation: { description: 'RFC 9745: `@<unix seconds>` of the deprecation', schema: { type: 'string' } },
        Sunset: {
          description: 'RFC 8594: HTTP-date after which the operation answers 410',
          schema: { type: 'string' },
        },
        Link: { description: '`</v1/pets?ids={petId}>; rel="successor-version"`', schema: { type: 'string' } },
        ETag: { description: 'Entity tag of the pet', schema: { type: 'string' } },
      },
    }),
    // The handler reads the id itself (pets.controller.ts).
    ApiParam({ name: 'petId', type: Number }),
    ApiHeader(IF_NONE_MATCH_HEADER),
    ApiErrors(410),
  );

export const UpdatePetDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'updatePet',
      summary: 'Change a pet (a status sets the stock it implies)',
      description:
        'Changes the fields sent. A status sets the stock it implies (`available`: at least one unit, `sold`: none); `pending` is derived from open orders and cannot be sent. With If-Match, only if the ETag still matches (412 otherwise).',
    }),
    ApiOkResponse({ type: PetSchema }),
    ApiHeader(IF_MATCH_HEADER),
    ApiErrors(412),
  );

export const DeletePetDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'deletePet',
      summary: 'Delete a pet without open orders (else 409 pet_has_open_orders)',
      description:
        'Deletes a pet with no open orders; otherwise 409 `pet_has_open_orders` (cancel or let them complete first). With If-Match, only if the ETag still matches (412 otherwise).',
    }),
    ApiNoContentResponse({ description: 'Deleted' }),
    ApiHeader(IF_MATCH_HEADER),
    ApiErrorResponse(409, 'The pet has open orders; cancel them or let them complete first (pet_has_open_orders)'),
    ApiErrors(412),
  );
