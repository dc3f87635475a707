import { INestApplication } from '@nestjs/common';
import { SCOPE_RULES, SCOPES } from '@app/access';
import { AppConfig } from '@app/config';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorSchema } from './error-body.schema';
import { errorExample, exampleOf } from './document-examples';
import { eventPayloadModels, typeEventData } from './event-payloads';
import { POLICY_EXTENSION, RoutePolicy, RouteScope } from '../policy/route-policy.decorator';
import { API_PREFIX } from '../policy/route-registry';

// The document is walked as plain JSON; its nodes have no useful static type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

// Declared once, with a description (spectral: operation-tag-defined).
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
const REPLAYED = {
  description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
  required: false,
  schema: { type: 'string', enum: ['true'] },
};
const GATE_HEADERS = Object.keys(RATE_LIMIT_HEADERS).filter((n) => n !== 'X-Request-Id');
// For answers Node may give before the gate.
const OPTIONAL = '.unlessRefusedBeforeGate';
const HEADERS: Record<string, Json> = {
  ...RATE_LIMIT_HEADERS,
  ...RETRY_AFTER,
  'Idempotent-Replayed': REPLAYED,
  ...Object.fromEntries(
    GATE_HEADERS.map((n) => [
      `${n}${OPTIONAL}`,
      {
        ...RATE_LIMIT_HEADERS[n],
        required: false,
        description: `${RATE_LIMIT_HEADERS[n].description}; absent when the request was refused before the limiter ran (by Node, or a 503 while too many new keys are checked)`,
      },
    ]),
  ),
};
// Node answers these itself (http-server.ts) before any key is read.
const BEFORE_GATE = 'Answered before the API key is read: no rate-limit headers, only X-Request-Id. ';
const PRE_GATE_RESPONSES: Record<string, Json> = {
  RequestTimeout: {
    description: `${BEFORE_GATE}The request was not received in time (request_timeout)`,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  HeadersTooLarge: {
    description: `${BEFORE_GATE}The request line and headers exceed 16 KB (headers_too_large)`,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
};
// Node's own 400 and 413, and the 503 of a replica whose key-lookup budget is spent (never a strike).
const ALSO_BEFORE_GATE = new Set(['400', '413', '503']);
const ETAG = { description: 'Version of this representation', required: true, schema: { type: 'string' } };
// Given before the handler runs (gate, body parser, pipes), or not stored: never replayed.
const NOT_FROM_HANDLER = new Set(['400', '401', '403', '413', '429']);
const LINK = {
  description: 'The next page, `<...>; rel="next"`, when there may be one (absent on the last page)',
  schema: { type: 'string' },
};
const headerRefs = (names: string[]) =>
  Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const COMMON_ERRORS: Record<string, string> = {
  '400':
    'Invalid JSON, wrong content type, or invalid parameters or body (see code and details); ' +
    'an unparseable HTTP request (malformed_request) is answered before the API key is read, without rate-limit headers',
  '401': 'API key missing, malformed or not valid (missing_api_key, invalid_authorization, invalid_api_key)',
  '404': 'No such record in this account, or no such route (not_found)',
  '429': 'Rate limit exceeded or API key temporarily banned (rate_limit_exceeded, api_key_banned)',
  '500': 'Unexpected failure (internal_error); no internals are disclosed',
  '503':
    'A backing service is unavailable, or too many new keys are being checked at once (service_unavailable); retry after Retry-After',
};
const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No Content',
};
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// As ParseIdPipe accepts.
const PATH_ID = { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };

/** Deprecated operations whose sunset instant is configuration, by operationId. */
export function configuredSunsets(config: AppConfig): Record<string, Date> {
  return { getPet: config.petGetSunsetAt };
}

const code = (s: string) => `\`${s}\``;
const orList = (items: string[]) =>
  items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : items.join('');

const SCOPE_SENTENCE = SCOPES.map((s) => {
  const implies = SCOPE_RULES[s].implies.map(code);
  return `${code(s)} ${SCOPE_RULES[s].grants}${implies.length ? ` and implies ${implies.join(', ')}` : ''}`;
}).join('; ');

const INFO_DESCRIPTION = `Pets, categories, orders and inventory, a queued message operation, events and webhooks.

**Authentication.** Every request carries \`Authorization: Bearer <API_KEY>\`. A key's scopes decide what it
reaches: ${SCOPE_SENTENCE}; a key
with \`admin\` alone reaches only /account, /keys, /rate_limit and /usage. Each operation states what it needs
(\`x-scope\`); anything else is 403 \`insufficient_scope\`.

**Errors.** Every 4xx and 5xx answer is the \`Error\` model: a machine-readable \`code\`, a \`message\`, the
\`status\` and, for invalid input, \`details\` naming each field at fault. Every answer carries \`X-Request-Id\`.
Strings (in bodies, paths and queries) must not contain U+0000: such requests are answered 400.

**Rate limits.** Limits apply per account and plan, per minute and per day. Every answer carries
\`X-RateLimit-Limit\`, \`-Remaining\`, \`-Reset\` (and the IETF draft \`RateLimit\` headers) for the window closest to
its limit; 429 and 503 carry \`Retry-After\` (seconds). \`GET /rate_limit\` reads the state without counting.

**Retries.** Creating POSTs accept an \`Idempotency-Key\`: a retry with the same key and body gets the first answer
again (marked \`Idempotent-Replayed: true\`) instead of doing the work twice.

**Pages.** Lists are keyset pages in id order: follow \`Link: <...>; rel="next"\` until an answer has none.

**Conditional requests.** Single records carry an \`ETag\`; \`If-None-Match\` may answer 304, and writes that
take \`If-Match\` answer 412 when the record changed since.

**Stability.** An operation without \`x-stability\` is stable: it changes only compatibly within \`/v1\`, and a
removal is announced with \`deprecated\`, an \`x-sunset\` date and the \`Deprecation\` and \`Sunset\` headers, after
which it answers 410. \`x-stability: beta\` marks an operation whose shape is settled but may still change
compatibly-breaking with notice in this document; \`x-stability: experimental\` marks one that may change or go
away without a deprecation period.`;

/** Scopes are not part of an HTTP bearer scheme in OAS 3.0, so the scheme's description states them. */
const BEARER_DESCRIPTION =
  `An API key (\`pst_…\`) of the account, sent as \`Authorization: Bearer <key>\`. Scopes: ${SCOPE_SENTENCE}. ` +
  'Each operation names the scope it needs (`x-scope`); a key without it gets 403 `insufficient_scope`. Keys are issued, rotated and ' +
  'revoked under /keys.';

// Serves /openapi.json and `npm run openapi` alike, so the two never differ. Each operation states the
// policy its handler declares (@Policy, whose route carries it to the gate).
export function buildOpenApiDocument(
  app: INestApplication,
  { sunsets = {} }: { sunsets?: Record<string, Date> } = {},
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Pet Store API')
    .setDescription(INFO_DESCRIPTION)
    .setVersion('1.0.0')
    .addServer(`/${API_PREFIX}`, 'This deployment')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'pst_…', description: BEARER_DESCRIPTION }, 'bearer')
    .addSecurityRequirements('bearer');
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    ignoreGlobalPrefix: true,
    extraModels: [ErrorSchema, ...eventPayloadModels()],
    operationIdFactory: (_controller, method) => method,
  });
  doc.openapi = '3.0.3';
  delete (doc.info as Json).contact;
  (doc.components ??= {}).headers = HEADERS;
  typeEventData(doc.components.schemas as Record<string, Json>);
  (doc.components as Json).responses = { ...doc.components.responses, ...PRE_GATE_RESPONSES };

  for (const item of Object.values(doc.paths) as Json[]) {
    for (const method of HTTP_METHODS.filter((m) => item[m])) {
      const op = item[method];
      const sunset = sunsets[op.operationId as string];
      if (sunset) op['x-sunset'] = sunset.toISOString();
      const policy = op[POLICY_EXTENSION] as RoutePolicy | undefined;
      delete op[POLICY_EXTENSION];
      if (policy) publishPolicy(op, policy);
      completeOperation(method, op);
    }
  }
  forbidUnknownRequestFields(doc);
  optionalBodies(doc);
  walkSchemas(doc, integerFormats);
  const schemas = doc.components!.schemas as Record<string, Json>;
  const inlined = new Set<string>();
  walkSchemas(doc, (schema) => nullableReferences(schema, schemas, inlined));
  for (const name of inlined) if (!JSON.stringify(doc).includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  addExamples(doc);
  return doc;
}

function scopeText(scope: RouteScope): string {
  if (scope === 'any') return `any key of the account (${orList(SCOPES.map(code))})`;
  const impliedBy = SCOPES.filter((s) => SCOPE_RULES[s].implies.includes(scope));
  return `the ${code(scope)} scope${impliedBy.length ? ` (${orList(impliedBy.map(code))} implies it)` : ''}`;
}

function publishPolicy(op: Json, policy: RoutePolicy): void {
  op['x-scope'] = policy.scope;
  const budget = policy.metering === 'account' ? undefined : policy.metering;
  op['x-metering'] = budget
    ? { budget: budget.name, perMinute: budget.perMinute, perDay: budget.perDay }
    : { budget: null };
  if (policy.idempotent) op['x-idempotent'] = policy.idempotent;
  if (policy.stability !== 'stable') op['x-stability'] = policy.stability;
  if (policy.deprecated) op.deprecated = true;
  const metering = budget
    ? `Not counted against the account's limits: ${budget.perMinute} calls a minute and ${budget.perDay} a day per key.`
    : "Counted against the account's limits.";
  op.description = `${op.description ?? ''}\n\nNeeds ${scopeText(policy.scope)}. ${metering}`.trim();
}

function completeOperation(method: string, op: Json): void {
  const params = uniqueParameters((op.parameters ?? []) as Json[]);
  if (params.length) op.parameters = params;
  const responses = op.responses as Record<string, Json>;
  const hasHeader = (name: string) => params.some((p) => p.in === 'header' && String(p.name).toLowerCase() === name);
  if (hasHeader('if-none-match')) {
    responses['304'] ??= { description: 'Not modified: the ETag sent in If-None-Match is still current' };
    for (const status of ['200', '304']) responses[status].headers = { ETag: ETAG, ...responses[status].headers };
  }
  if (hasHeader('if-match') && responses['200']) responses['200'].headers = { ETag: ETAG, ...responses['200'].headers };
  if (params.some((p) => p.in === 'query' && p.name === 'limit') && responses['200'])
    responses['200'].headers = { Link: LINK, ...responses['200'].headers };
  // A deprecated operation announces it (Deprecation, Sunset, the successor Link) on whatever its handler answers.
  const notice = op.deprecated ? pick(responses['200']?.headers, ['Deprecation', 'Sunset', 'Link']) : {};
  const common = { ...COMMON_ERRORS };
  const idempotent = hasHeader('idempotency-key');
  const scope = (op['x-scope'] ?? (method === 'get' ? 'any' : 'write')) as RouteScope;
  if (scope !== 'any') common['403'] = `The API key lacks the ${scope} scope (insufficient_scope)`;
  if (op.requestBody) common['413'] = 'The body is larger than the limit (payload_too_large)';
  for (const [status, description] of Object.entries(common)) {
    responses[status] ??= { description, content: { 'application/json': { schema: ERROR_REF } } };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (!response.description) response.description = SUCCESS_DESCRIPTIONS[status] ?? 'Error';
    const names = Object.keys(RATE_LIMIT_HEADERS);
    if (status === '429' || status === '503') names.push('Retry-After');
    const refs = headerRefs(names);
    if (ALSO_BEFORE_GATE.has(status)) {
      for (const name of GATE_HEADERS) refs[name] = { $ref: `#/components/headers/${name}${OPTIONAL}` };
    }
    response.headers = { ...refs, ...response.headers };
    if (!NOT_FROM_HANDLER.has(status)) response.headers = { ...notice, ...response.headers };
    // The handler's answers are stored and replayed, but not 400s (nothing was done) nor 5xx (idempotency.service.ts).
    if (idempotent && Number(status) < 500 && !NOT_FROM_HANDLER.has(status))
      response.headers['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  }
  responses['408'] = { $ref: '#/components/responses/RequestTimeout' };
  responses['431'] = { $ref: '#/components/responses/HeadersTooLarge' };
  for (const p of params) {
    if (p.in === 'path' && p.schema?.type === 'number' && !p.schema.format) p.schema = { ...PATH_ID };
  }
}

function pick(headers: Json | undefined, names: string[]): Json {
  return Object.fromEntries(names.filter((n) => headers?.[n]).map((n) => [n, { ...headers![n], required: false }]));
}

// `@Headers('if-match')` makes @nestjs/swagger infer a required `if-match` beside the declared
// `If-Match`; two parameters break clients and validating proxies. The declared one is kept.
// `@Headers('authorization')` (the event stream reads its key) is no parameter: OAS 3.0 ignores one
// named Authorization, the bearer scheme declares it, and generated clients would demand it.
function uniqueParameters(params: Json[]): Json[] {
  const key = (p: Json) => `${p.in}:${p.in === 'header' ? String(p.name).toLowerCase() : p.name}`;
  const kept = new Map<string, Json>();
  for (const p of params) {
    if (key(p) === 'header:authorization') continue;
    const seen = kept.get(key(p));
    if (!seen || (!seen.description && p.description)) kept.set(key(p), p);
  }
  return [...kept.values()];
}

// ApiValidationPipe runs with forbidNonWhitelisted, nested objects included.
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

// ApiValidationPipe reads no body as `{}`; @nestjs/swagger marks every @Body() required.
function optionalBodies(doc: OpenAPIObject): void {
  const schemas = doc.components!.schemas as Record<string, Json>;
  for (const item of Object.values(doc.paths) as Json[]) {
    for (const method of HTTP_METHODS.filter((m) => item[m]?.requestBody)) {
      const body = item[method].requestBody;
      let schema = body.content?.['application/json']?.schema ?? {};
      if (schema.$ref) schema = schemas[String(schema.$ref).split('/').pop()!];
      if (schema?.type === 'object' && !schema.required?.length) body.required = false;
    }
  }
}

// `format: 'int64'` on a TS `number` comes out as `type: number`. An int64 is always an id
// (1..2^53-1); any other integer is an int32, so generators pick the right type.
function integerFormats(schema: Json): void {
  if (schema.type === 'number' && (schema.format === 'int64' || schema.format === 'int32')) schema.type = 'integer';
  if (schema.type === 'integer' && schema.format === 'int64') {
    schema.minimum ??= 1;
    schema.maximum ??= Number.MAX_SAFE_INTEGER;
  }
  // Every other integer (limits, counts, statuses, seconds) is a Postgres `integer` or smaller.
  if (schema.type === 'integer' && !schema.format) {
    schema.format = 'int32';
  }
}

function addExamples(doc: OpenAPIObject): void {
  const schemas = doc.components!.schemas as Record<string, Json>;
  for (const item of Object.values(doc.paths) as Json[]) {
    for (const method of HTTP_METHODS.filter((m) => item[m])) {
      const op = item[method];
      const context = `${op.summary ?? ''} ${op.description ?? ''}`;
      const media: Json | undefined = op.requestBody?.content?.['application/json'];
      if (media && media.example === undefined) media.example = exampleOf(media.schema, schemas);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const body: Json | undefined = response.content?.['application/json'];
        if (!body || body.example !== undefined || body.examples) continue;
        body.example =
          Number(status) >= 400
            ? errorExample(Number(status), String(response.description ?? ''), context)
            : exampleOf(body.schema, schemas);
      }
    }
  }
}

// `nullable` beside `allOf: [$ref]` cannot make the referenced object null in OAS 3.0.3, so the
// model is written in place with `nullable: true` (an `anyOf` with a null branch broke orval's types).
function nullableReferences(schema: Json, schemas: Record<string, Json>, inlined: Set<string>): void {
  if (schema.nullable !== true || schema.allOf?.length !== 1 || !schema.allOf[0].$ref) return;
  const name = String(schema.allOf[0].$ref).split('/').pop()!;
  const model = schemas[name];
  inlined.add(name);
  delete schema.allOf;
  Object.assign(schema, structuredClone(model), { type: 'object', nullable: true });
}

function walkSchemas(node: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(node)) return node.forEach((n) => walkSchemas(n, visit));
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  if (typeof obj.type === 'string') visit(obj);
  for (const value of Object.values(obj)) walkSchemas(value, visit);
}
