import { ERROR_STATUS, ErrorCode } from '@app/errors';

// The document is walked as plain JSON; its nodes have no useful static type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

// Deep enough for a page of events (array, union, variant, data); a cycle stops here.
const MAX_DEPTH = 12;
const STRING_EXAMPLES: Record<string, string> = {
  // Far in the future, so a request example stays valid (an expiry, a ship date) for as long as the document lives.
  'date-time': '2099-01-15T09:30:00.000Z',
  date: '2099-01-15',
  uri: 'https://hooks.example.com/petstore',
  url: 'https://hooks.example.com/petstore',
  uuid: '6f1c2b1e-3d4a-4f5b-8c9d-0e1f2a3b4c5d',
};

/** From the properties' `@ApiProperty({ example })`, else from type, format and bounds. */
export function exampleOf(schema: Json | undefined, schemas: Record<string, Json>, depth = 0): unknown {
  if (!schema || depth > MAX_DEPTH) return undefined;
  if (schema.$ref) return exampleOf(schemas[String(schema.$ref).split('/').pop()!], schemas, depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (schema.allOf?.length === 1) return exampleOf(schema.allOf[0], schemas, depth + 1);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Json) => exampleOf(s, schemas, depth + 1)));
  if (schema.oneOf ?? schema.anyOf) return exampleOf((schema.oneOf ?? schema.anyOf)[0], schemas, depth + 1);
  if (schema.enum) return schema.default ?? schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  switch (schema.type) {
    case 'array':
      return [exampleOf(schema.items, schemas, depth + 1)];
    case 'integer':
    case 'number':
      return Math.min(Math.max(schema.minimum ?? 1, 1), schema.maximum ?? Infinity);
    case 'boolean':
      return true;
    case 'string':
      return STRING_EXAMPLES[schema.format] ?? 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
    default:
      return Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([name, sub]) => [
          name,
          exampleOf(sub, schemas, depth + 1),
        ]),
      );
  }
}

const ERROR_MESSAGES: Partial<Record<ErrorCode, string>> = {
  validation_failed: 'The body or parameters are not valid',
  invalid_api_key: 'The API key is not valid',
  insufficient_scope: 'This API key lacks the scope this operation needs',
  not_found: 'No such record',
  rate_limit_exceeded: 'Rate limit exceeded; retry after Retry-After seconds',
  internal_error: 'Internal error',
  service_unavailable: 'A backing service is unavailable; retry after Retry-After seconds',
};

/** A code the answer's description names, else one the operation names, else the first code of that status. */
export function errorExample(status: number, description: string, context = ''): Json | undefined {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => ERROR_STATUS[c] === status);
  const named = (text: string) => codes.find((c) => new RegExp(`\\b${c}\\b`).test(text));
  const code = named(description) ?? named(context) ?? codes.find((c) => ERROR_MESSAGES[c]) ?? codes[0];
  if (!code) return undefined;
  const message = ERROR_MESSAGES[code] ?? code.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase());
  const example: Json = { code, message, status };
  if (code === 'validation_failed') example.details = [{ field: 'name', message: 'name must be 1 to 200 characters' }];
  return example;
}
