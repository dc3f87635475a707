import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiExtension, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { ApiErrors } from './api-errors.decorator';
import { buildOpenApiDocument } from './openapi-document';

class NewThingDto {
  @ApiProperty({ maxLength: 10 }) @IsString() name!: string;
}

class ThingView {
  @ApiProperty({ format: 'int64' }) id!: number;
  @ApiProperty() name!: string;
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
    expect(Object.keys(create).sort()).toEqual(['201', '400', '401', '403', '404', '409', '413', '429', '500', '503']);
    expect(create['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    const read = doc.paths['/things/{thingId}'].get.responses;
    expect(Object.keys(read).sort()).toEqual(['200', '400', '401', '404', '429', '500', '503']);
    expect(read['200'].description).toBe('OK');
  });

  it('declares the rate-limit headers on every response, and Retry-After on 429 and 503', () => {
    for (const item of Object.values(doc.paths) as any[]) {
      for (const op of Object.values(item) as any[]) {
        for (const [status, res] of Object.entries(op.responses) as [string, any][]) {
          expect(res.headers['X-RateLimit-Remaining']).toEqual({ $ref: '#/components/headers/X-RateLimit-Remaining' });
          expect('Retry-After' in res.headers).toBe(status === '429' || status === '503');
        }
      }
    }
    expect(doc.components.headers['Retry-After'].required).toBe(true);
  });

  it('makes ids integers, closes request bodies, and uses the model names', () => {
    expect(doc.paths['/things/{thingId}'].get.parameters[0].schema).toEqual({
      type: 'integer',
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(doc.components.schemas.Thing.properties.id).toEqual({ type: 'integer', format: 'int64' });
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
