import { INestApplication } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorSchema } from './error-body.schema';

// The document is walked as plain JSON; its nodes have no useful static type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Every tag an operation may use, declared once with its description (spectral: operation-tag-defined). */
const TAGS: Record<string, string> = {
  Pets: 'Pets and their categories',
  Store: 'Inventory and orders',
  Messages: 'The queued message operation',
  Events: 'The account’s event log',
  Webhooks: 'Webhook endpoints and their deliveries',
  Keys: 'API keys of the calling account',
  Account: 'The calling account, its plan and its rate-limit state',
};

const intHeader = (description: string) => ({ description, required: true, schema: { type: 'integer' } });
/** Set by the request gate on every /v1 answer, errors included (see request-gate.middleware.ts). */
const RATE_LIMIT_HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit': intHeader('Limit of the window described (the one with the fewest requests remaining)'),
  'X-RateLimit-Remaining': intHeader('Requests remaining in that window'),
  'X-RateLimit-Reset': intHeader('Unix time (seconds) at which that window resets'),
  'X-RateLimit-Used': intHeader('Requests counted in that window'),
  'X-RateLimit-Resource': {
    description: 'Which window is described',
    required: true,
    schema: { type: 'string', enum: ['minute', 'day'] },
  },
  'RateLimit-Policy': {
    description: 'IETF draft: both windows of the plan',
    required: true,
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'IETF draft: the described window, remaining and seconds to reset',
    required: true,
    schema: { type: 'string' },
  },
  'X-Request-Id': { description: 'The request id, echoed or generated', required: true, schema: { type: 'string' } },
};
const RETRY_AFTER = { 'Retry-After': intHeader('Seconds to wait before retrying') };
const HEADERS: Record<string, Json> = { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER };
const headerRefs = (names: string[]) =>
  Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const COMMON_ERRORS: Record<string, string> = {
  '400': 'Invalid JSON, wrong content type, or invalid parameters or body (see code and details)',
  '401': 'API key missing, malformed or not valid (missing_api_key, invalid_authorization, invalid_api_key)',
  '404': 'No such record in this account, or no such route (not_found)',
  '429': 'Rate limit exceeded or API key temporarily banned (rate_limit_exceeded, api_key_banned)',
  '500': 'Unexpected failure (internal_error); no internals are disclosed',
  '503': 'A backing service is unavailable (service_unavailable); retry after Retry-After',
};
const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No Content',
};
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Path ids go through ParseIdPipe: 1..2^53-1 (libs/errors/src/validation.ts). */
const PATH_ID = { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };

/**
 * The OpenAPI 3.0.3 document, generated from the controllers and completed here with what
 * applies to every operation: the common error answers with the Error schema, the rate-limit
 * headers on every answer (plus Retry-After on 429 and 503), and corrections where
 * @nestjs/swagger's output is not exactly what the service does. Used both to serve
 * /openapi.json and by `npm run openapi` (scripts/openapi-document.ts), so the two never differ.
 */
/** Deprecated operations whose sunset instant is configuration, by operationId. */
export function configuredSunsets(config: AppConfig): Record<string, Date> {
  return { getPet: config.petGetSunsetAt };
}

export function buildOpenApiDocument(app: INestApplication, sunsets: Record<string, Date> = {}): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Pet Store API')
    .setDescription(
      'Pets, categories, orders and inventory, a queued message operation, events and webhooks. ' +
        'Every request carries `Authorization: Bearer <API_KEY>`; limits apply per account and plan. ' +
        'Strings (in bodies, paths and queries) must not contain U+0000: such requests are answered 400.',
    )
    .setVersion('1.0.0')
    .addServer('/v1', 'This deployment')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'pst_…' }, 'bearer')
    .addSecurityRequirements('bearer');
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    ignoreGlobalPrefix: true,
    extraModels: [ErrorSchema],
    operationIdFactory: (_controller, method) => method,
  });
  doc.openapi = '3.0.3';
  delete (doc.info as Json).contact;
  const out = renameSchemas(doc);
  (out.components ??= {}).headers = HEADERS;

  for (const item of Object.values(out.paths) as Json[]) {
    for (const method of HTTP_METHODS.filter((m) => item[m])) {
      const op = item[method];
      const sunset = sunsets[op.operationId as string];
      if (sunset) op['x-sunset'] = sunset.toISOString();
      completeOperation(method, op);
    }
  }
  forbidUnknownRequestFields(out);
  walkSchemas(out, integerFormats);
  return out;
}

function completeOperation(method: string, op: Json): void {
  // Conditional reads: If-None-Match may answer 304 (no body) and the 200 carries the ETag.
  const params = (op.parameters ?? []) as Json[];
  if (params.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'if-none-match')) {
    const responses = op.responses as Record<string, Json>;
    responses['304'] ??= { description: 'Not modified: the ETag sent in If-None-Match is still current' };
    const ok = responses['200'];
    if (ok)
      ok.headers = {
        ETag: { description: 'Version of this representation', required: true, schema: { type: 'string' } },
        ...ok.headers,
      };
  }
  const responses = op.responses as Record<string, Json>;
  const common = { ...COMMON_ERRORS };
  if (method !== 'get') common['403'] = 'The API key lacks the write scope (insufficient_scope)';
  if (op.requestBody) common['413'] = 'The body is larger than the limit (payload_too_large)';
  for (const [status, description] of Object.entries(common)) {
    responses[status] ??= { description, content: { 'application/json': { schema: ERROR_REF } } };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (!response.description) response.description = SUCCESS_DESCRIPTIONS[status] ?? 'Error';
    const names = Object.keys(RATE_LIMIT_HEADERS);
    if (status === '429' || status === '503') names.push('Retry-After');
    response.headers = { ...headerRefs(names), ...response.headers };
  }
  for (const p of (op.parameters ?? []) as Json[]) {
    // A bare `number` path parameter is an id parsed by ParseIdPipe.
    if (p.in === 'path' && p.schema?.type === 'number' && !p.schema.format) p.schema = { ...PATH_ID };
  }
}

/**
 * The interface's model names: `ErrorSchema` -> `Error`, `NewPetDto` -> `NewPet`, `PetView` -> `Pet`
 * (a class-name suffix is dropped unless another schema already has the shorter name).
 */
function renameSchemas(doc: OpenAPIObject): OpenAPIObject {
  const names = Object.keys(doc.components?.schemas ?? {});
  const taken = new Set(names);
  const renames = new Map<string, string>();
  for (const name of names) {
    const short = name.replace(/(Dto|Schema|View)$/, '');
    if (short !== name && short && !taken.has(short)) {
      renames.set(name, short);
      taken.add(short);
    }
  }
  const json = JSON.stringify(doc).replace(/"#\/components\/schemas\/([^"]+)"/g, (ref, name: string) =>
    renames.has(name) ? `"#/components/schemas/${renames.get(name)}"` : ref,
  );
  const out = JSON.parse(json) as OpenAPIObject;
  const schemas = out.components!.schemas!;
  out.components!.schemas = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [renames.get(name) ?? name, schema]),
  );
  return out;
}

/** ApiValidationPipe runs with forbidNonWhitelisted: request bodies (and their nested objects) take no other field. */
function forbidUnknownRequestFields(doc: OpenAPIObject): void {
  const schemas = doc.components!.schemas as Record<string, Json>;
  const seen = new Set<Json>();
  const close = (schema: Json | undefined): void => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    if (schema.$ref) return close(schemas[String(schema.$ref).split('/').pop()!]);
    if (schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
    for (const sub of Object.values(schema.properties ?? {})) close(sub as Json);
    close(schema.items);
    for (const key of ['allOf', 'anyOf', 'oneOf']) for (const sub of schema[key] ?? []) close(sub);
  };
  for (const item of Object.values(doc.paths) as Json[]) {
    for (const method of HTTP_METHODS.filter((m) => item[m])) {
      close(item[method].requestBody?.content?.['application/json']?.schema);
    }
  }
}

/** `@ApiProperty({ format: 'int64' })` on a TypeScript `number` comes out as `type: number`. */
function integerFormats(schema: Json): void {
  if (schema.type === 'number' && (schema.format === 'int64' || schema.format === 'int32')) schema.type = 'integer';
}

function walkSchemas(node: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(node)) return node.forEach((n) => walkSchemas(n, visit));
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  if (typeof obj.type === 'string') visit(obj);
  for (const value of Object.values(obj)) walkSchemas(value, visit);
}
