import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Body, Controller, Get, Headers, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiExtension,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiSchema,
  ApiTags,
} from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from '../common/etag';
import { PageQuery } from '../common/pagination';
import { ApiErrors } from './api-errors.decorator';
import { buildOpenApiDocument } from './openapi-document';

@ApiSchema({ name: 'NewThing' })
class NewThingDto {
  @ApiProperty({ maxLength: 10 }) @IsString() name!: string;
}

@ApiSchema({ name: 'ThingResult' })
class ThingResultView {
  @ApiProperty() size!: number;
}

@ApiSchema({ name: 'Thing' })
class ThingView {
  @ApiProperty({ format: 'int64' }) id!: number;
  @ApiProperty() name!: string;
  @ApiPropertyOptional({ type: ThingResultView, nullable: true }) result?: ThingResultView | null;
}

@ApiTags('Pets')
@Controller('things')
class ThingsController {
  @Post()
  @ApiOperation({ operationId: 'createThing', summary: 'Create' })
  @ApiCreatedResponse({ type: ThingView })
  @ApiErrors(409)
  create(@Body() body: NewThingDto): ThingView {
    return { id: 1, name: body.name };
  }

  @Get(':thingId')
  @ApiOperation({ operationId: 'getThing', summary: 'Read', deprecated: true })
  @ApiExtension('x-sunset', '2027-01-01')
  @ApiExtension('x-stability', 'beta')
  @ApiOkResponse({ type: ThingView })
  get(@Param('thingId') thingId: number): ThingView {
    return { id: thingId, name: 'x' };
  }

  @Get(':thingId/latest')
  @ApiOperation({ operationId: 'getLatestThing', summary: 'Read with ETag' })
  @ApiHeader(IF_NONE_MATCH_HEADER)
  @ApiOkResponse({ type: ThingView })
  latest(
    @Param('thingId') thingId: number,
    @Headers('if-none-match') _tag?: string,
    @Headers('authorization') _key?: string,
  ): ThingView {
    return { id: thingId, name: 'x' };
  }

  @Patch(':thingId')
  @ApiOperation({ operationId: 'updateThing', summary: 'Update' })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiOkResponse({ type: ThingView })
  update(@Param('thingId') thingId: number, @Headers('if-match') _ifMatch?: string): ThingView {
    return { id: thingId, name: 'x' };
  }

  @Get()
  @ApiOperation({ operationId: 'listThings', summary: 'List' })
  @ApiOkResponse({ type: [ThingView] })
  list(@Query() _query: PageQuery): ThingView[] {
    return [];
  }
}

describe('buildOpenApiDocument', () => {
  let doc: any;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [ThingsController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    doc = buildOpenApiDocument(app);
    await app.close();
  });

  it('passes deprecated, x-sunset and x-stability through', () => {
    const op = doc.paths['/things/{thingId}'].get;
    expect(op).toEqual(expect.objectContaining({ deprecated: true, 'x-sunset': '2027-01-01', 'x-stability': 'beta' }));
  });

  it('adds the common errors with the Error schema, 403 on writes, 413 with a body, and keeps operation-specific ones', () => {
    const create = doc.paths['/things'].post.responses;
    expect(Object.keys(create).sort()).toEqual(
      ['201', '400', '401', '403', '404', '408', '409', '413', '429', '431', '500', '503'].sort(),
    );
    expect(create['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    const read = doc.paths['/things/{thingId}'].get.responses;
    expect(Object.keys(read).sort()).toEqual(['200', '400', '401', '404', '408', '429', '431', '500', '503'].sort());
    expect(read['200'].description).toBe('OK');
  });

  it('declares the rate-limit headers on every response, and Retry-After on 429 and 503', () => {
    for (const item of Object.values(doc.paths) as any[]) {
      for (const op of Object.values(item) as any[]) {
        for (const [status, res] of Object.entries(op.responses) as [string, any][]) {
          if (status === '408' || status === '431') continue;
          const variant = ['400', '413', '503'].includes(status) ? '.unlessRefusedBeforeGate' : '';
          expect(res.headers['X-RateLimit-Remaining']).toEqual({
            $ref: `#/components/headers/X-RateLimit-Remaining${variant}`,
          });
          expect('Retry-After' in res.headers).toBe(status === '429' || status === '503');
        }
      }
    }
    expect(doc.components.headers['Retry-After'].required).toBe(true);
  });

  it('answers 408 and 431 with shared responses that carry no rate-limit headers (Node refuses them before the gate)', () => {
    const responses = doc.paths['/things/{thingId}'].get.responses;
    expect(responses['408']).toEqual({ $ref: '#/components/responses/RequestTimeout' });
    expect(responses['431']).toEqual({ $ref: '#/components/responses/HeadersTooLarge' });
    for (const name of ['RequestTimeout', 'HeadersTooLarge'])
      expect(Object.keys(doc.components.responses[name].headers)).toEqual(['X-Request-Id']);
    expect(doc.components.headers['X-RateLimit-Remaining.unlessRefusedBeforeGate'].required).toBe(false);
  });

  it('declares a header parameter once when @Headers() and @ApiHeader name it in different case', () => {
    const params = doc.paths['/things/{thingId}'].patch.parameters.filter((p: any) => p.in === 'header');
    expect(params).toEqual([expect.objectContaining({ name: 'If-Match', required: false })]);
  });

  it('declares no Authorization header parameter for a handler reading the key (the bearer scheme declares it)', () => {
    const params = doc.paths['/things/{thingId}/latest'].get.parameters.filter((p: any) => p.in === 'header');
    expect(params).toEqual([expect.objectContaining({ name: 'If-None-Match' })]);
  });

  it('declares ETag on conditional reads (200 and 304) and writes (200), and Link on keyset lists', () => {
    const read = doc.paths['/things/{thingId}/latest'].get.responses;
    expect(read['200'].headers.ETag.required).toBe(true);
    expect(read['304'].headers.ETag.required).toBe(true);
    expect(doc.paths['/things/{thingId}'].patch.responses['200'].headers.ETag.required).toBe(true);
    expect(doc.paths['/things'].get.responses['200'].headers.Link).toEqual(
      expect.objectContaining({ schema: { type: 'string' } }),
    );
    expect(doc.paths['/things/{thingId}'].get.responses['200'].headers.Link).toBeUndefined();
  });

  it('writes a nullable model property as the model itself with type object and nullable (nullable beside allOf cannot be null)', () => {
    const result = doc.components.schemas.Thing.properties.result;
    expect(result).toEqual(expect.objectContaining({ type: 'object', nullable: true }));
    expect(result.properties).toEqual(expect.any(Object));
    expect(result.allOf).toBeUndefined();
    expect(doc.components.schemas.ThingResult).toBeUndefined(); // inlined where it was used, so not left unused
  });

  it('makes ids integers, closes request bodies, and uses the model names', () => {
    expect(doc.paths['/things/{thingId}'].get.parameters[0].schema).toEqual({
      type: 'integer',
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(doc.components.schemas.Thing.properties.id).toEqual({
      type: 'integer',
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(doc.components.schemas.NewThing.additionalProperties).toBe(false);
    expect(doc.components.schemas.Thing.additionalProperties).toBeUndefined();
    expect(doc.paths['/things'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NewThing',
    });
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Error', 'ErrorDetail']));
    expect(JSON.stringify(doc)).not.toMatch(/ErrorSchema|NewThingDto|ThingView/);
  });

  it('is OpenAPI 3.0.3 with the /v1 server, the bearer scheme and every tag declared with a description', () => {
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.servers).toEqual([{ url: '/v1', description: 'This deployment' }]);
    expect(doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.security).toEqual([{ bearer: [] }]);
    for (const tag of doc.tags) expect(tag.description).toEqual(expect.any(String));
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['Pets', 'Store']));
  });
});

/** The committed document (npm run openapi:check keeps it equal to what the code builds). */
describe('openapi.json', () => {
  const committed = JSON.parse(readFileSync(join(__dirname, '../../../../openapi.json'), 'utf8'));
  const operations = Object.entries(committed.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, op]: [string, any]) => ({ name: `${method} ${path}`, op })),
  );
  const schemas = (node: any, visit: (schema: any) => void): void => {
    if (!node || typeof node !== 'object') return;
    if (typeof node.type === 'string' || node.allOf || node.anyOf || node.oneOf) visit(node);
    for (const value of Object.values(node)) schemas(value, visit);
  };

  it('has one parameter per location and name, header names compared ignoring case', () => {
    for (const { name, op } of operations) {
      const keys = (op.parameters ?? []).map(
        (p: any) => `${p.in}:${p.in === 'header' ? p.name.toLowerCase() : p.name}`,
      );
      expect({ name, keys: [...new Set(keys)] }).toEqual({ name, keys });
    }
  });

  it('bounds every int64 (an id) to 1..2^53-1', () => {
    const unbounded: any[] = [];
    schemas(committed, (s) => {
      if (s.format === 'int64' && (s.minimum !== 1 || s.maximum !== Number.MAX_SAFE_INTEGER)) unbounded.push(s);
    });
    expect(unbounded).toEqual([]);
  });

  it('has no nullable that OAS 3.0.3 ignores (beside a composition or $ref, or without a type)', () => {
    const ineffective: any[] = [];
    schemas(committed, (s) => {
      if (s.nullable && (typeof s.type !== 'string' || s.allOf || s.oneOf || s.anyOf)) ineffective.push(s);
    });
    expect(ineffective).toEqual([]);
  });
});
