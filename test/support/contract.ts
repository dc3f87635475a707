import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

/** What the validator needs of an answer. */
export interface ObservedResponse {
  method: string;
  /** The request path, query string allowed (e.g. `/v1/keys?x=1`). */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

interface Route {
  template: string;
  pattern: RegExp;
  item: Json;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** Bodies of these are not described by the document (HEAD has none; OPTIONS is CORS). */
const UNCHECKED_METHODS = new Set(['head', 'options']);
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks answers against an OpenAPI 3.0 document: the status is listed for the operation the
 * request matched (method + templated path under the server prefix), the JSON body matches
 * its schema, and every header the answer declares `required` is present and well-formed.
 * A path under the prefix that matches no operation must be a documented 404 Error answer.
 * Response objects are checked closed: a property the schema does not declare is a violation.
 */
export class ContractValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly routes: Route[];
  private readonly prefix: string;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly notFound?: { pointer: string; response: Json };

  constructor(
    private readonly document: Json,
    /** Paths under the prefix that are not API operations (the document itself). */
    private readonly unchecked: RegExp = /\/openapi\.json$/,
  ) {
    addFormats(this.ajv);
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
    });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    for (const f of ['float', 'double']) this.ajv.addFormat(f, { type: 'number', validate: () => true });
    for (const f of ['binary', 'password']) this.ajv.addFormat(f, () => true);
    this.ajv.addSchema(toJsonSchemaDocument(document), 'doc');
    this.prefix = new URL(document.servers?.[0]?.url ?? '/', 'http://x').pathname.replace(/\/$/, '');
    this.routes = Object.entries(document.paths as Record<string, Json>)
      .map(([template, item]) => ({
        template,
        item,
        pattern: new RegExp(
          `^${template
            .split(/\{[^}]+\}/)
            .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('[^/]+')}$`,
        ),
      }))
      // Literal segments win over templated ones (/pets/findByStatus before /pets/{petId}).
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    for (const route of this.routes) {
      for (const method of HTTP_METHODS) {
        const response = route.item[method]?.responses?.['404'];
        if (response && !this.notFound) {
          this.notFound = { pointer: `/paths/${escapePointer(route.template)}/${method}/responses/404`, response };
        }
      }
    }
  }

  /** The violations of one answer; empty when it keeps the contract or is not an API operation. */
  check(res: ObservedResponse): string[] {
    const method = res.method.toLowerCase();
    const path = res.path.split('?')[0];
    if (UNCHECKED_METHODS.has(method)) return [];
    if (this.prefix && path !== this.prefix && !path.startsWith(`${this.prefix}/`)) return [];
    if (this.unchecked.test(path)) return [];
    const relative = path.slice(this.prefix.length) || '/';
    const route = this.routes.find((r) => r.pattern.test(relative) && r.item[method]);
    if (!route) {
      if (res.status !== 404 || !this.notFound)
        return [`no operation matches, so the answer must be a documented 404, not ${res.status}`];
      return this.checkResponse(res, this.notFound.pointer, this.notFound.response);
    }
    const responses = route.item[method].responses as Record<string, Json>;
    const key = [String(res.status), `${String(res.status)[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) return [`status ${res.status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    return this.checkResponse(
      res,
      `/paths/${escapePointer(route.template)}/${method}/responses/${key}`,
      responses[key],
    );
  }

  /** Throws a ContractViolation naming the request and every violation. */
  assert(res: ObservedResponse): void {
    const violations = this.check(res);
    if (violations.length) {
      throw new ContractViolation(
        `${res.method} ${res.path} answered ${res.status}, breaking the OpenAPI contract:\n  - ${violations.join('\n  - ')}\n` +
          `body: ${res.text.slice(0, 500)}`,
      );
    }
  }

  private checkResponse(res: ObservedResponse, pointer: string, response: Json): string[] {
    const violations: string[] = [];
    const contentType = res.headers.get('content-type') ?? '';
    const media = Object.keys(response.content ?? {});
    if (!media.length) {
      if (res.text) violations.push(`a body was sent but none is documented (${contentType})`);
    } else {
      const type = media.find((m) => contentType.startsWith(m) || (m.endsWith('json') && /json/.test(contentType)));
      if (!type) violations.push(`content-type "${contentType}" is not one of ${media.join(', ')}`);
      else if (/json/.test(type) && response.content[type].schema) {
        let body: unknown;
        try {
          body = JSON.parse(res.text);
        } catch {
          violations.push('the body is not valid JSON');
        }
        if (body !== undefined) {
          const schema = `${pointer}/content/${escapePointer(type)}/schema`;
          const errors = this.validate(schema, schema, body);
          violations.push(...errors.map((e) => `body${e}`));
        }
      }
    }
    for (const [name, declared] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const header = this.deref(declared);
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) violations.push(`required header ${name} is missing`);
        continue;
      }
      if (!header.schema) continue;
      const numeric = /^(integer|number)$/.test(header.schema.type) && /^-?\d+(\.\d+)?$/.test(value);
      const errors = this.validate(
        `header:${JSON.stringify(header.schema)}`,
        header.schema,
        numeric ? Number(value) : value,
      );
      violations.push(...errors.map((e) => `header ${name}="${value}"${e}`));
    }
    return violations;
  }

  /** Validates against a schema given inline or as a pointer into the (converted) document. */
  private validate(key: string, schema: Json | string, value: unknown): string[] {
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(typeof schema === 'string' ? { $ref: `doc#${schema}` } : schema);
      this.compiled.set(key, fn);
    }
    return fn(value) ? [] : (fn.errors ?? []).map(describe);
  }

  private deref(node: Json): Json {
    if (!node.$ref) return node;
    return String(node.$ref)
      .slice(2)
      .split('/')
      .reduce<any>((n, part) => n?.[part], this.document);
  }
}

function describe(e: ErrorObject): string {
  const extra = e.params.additionalProperty ? ` ("${e.params.additionalProperty}" is not documented)` : '';
  return `${e.instancePath} ${e.message}${extra}`;
}

/**
 * The document with every schema made plain JSON Schema for ajv: OpenAPI 3.0's `nullable`
 * becomes `anyOf [..., null]`, and object schemas are closed (additionalProperties: false)
 * unless they say otherwise or are composed with allOf (closing those would reject the
 * other parts' properties).
 */
function toJsonSchemaDocument(document: Json): Json {
  const doc = structuredClone(document);
  const composed = new Set<string>();
  JSON.stringify(doc, (key, value) => {
    if (key === 'allOf') for (const s of value as Json[]) if (s.$ref) composed.add(s.$ref);
    return value;
  });
  const convert = (schema: Json, closable: boolean): Json => {
    if (!schema || typeof schema !== 'object') return schema;
    if (schema.$ref) return schema.nullable ? { anyOf: [{ $ref: schema.$ref }, { type: 'null' }] } : schema;
    const out: Json = { ...schema };
    if (out.properties) {
      out.properties = Object.fromEntries(
        Object.entries(out.properties).map(([k, v]) => [k, convert(v as Json, true)]),
      );
      if (closable && out.additionalProperties === undefined) out.additionalProperties = false;
    }
    if (out.items) out.items = convert(out.items, true);
    if (out.additionalProperties && typeof out.additionalProperties === 'object')
      out.additionalProperties = convert(out.additionalProperties, true);
    for (const k of ['allOf', 'anyOf', 'oneOf'])
      if (out[k]) out[k] = out[k].map((s: Json) => convert(s, k !== 'allOf'));
    if (out.not) out.not = convert(out.not, false);
    if (out.nullable) {
      delete out.nullable;
      return { anyOf: [out, { type: 'null' }] };
    }
    return out;
  };
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) {
    schemas[name] = convert(schema, !composed.has(`#/components/schemas/${name}`));
  }
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of HTTP_METHODS.map((m) => item[m]).filter(Boolean)) {
      for (const response of Object.values((op.responses ?? {}) as Record<string, Json>)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, Json>)) {
          if (media.schema) media.schema = convert(media.schema, true);
        }
      }
    }
  }
  return doc;
}

const validators = new Map<string, Promise<ContractValidator | null>>();

/**
 * The validator for the API at baseUrl, from the document that API serves (so a test always
 * checks against the code under test; `npm run openapi:check` keeps the committed copy equal).
 * null when baseUrl serves no OpenAPI document (not our API): its answers are not checked.
 */
export function contractFor(baseUrl: string): Promise<ContractValidator | null> {
  let validator = validators.get(baseUrl);
  if (!validator) {
    validator = fetch(`${baseUrl}/openapi.json`)
      .then(async (res) => {
        const doc = res.ok ? ((await res.json()) as Json) : null;
        return doc && typeof doc.openapi === 'string' ? new ContractValidator(doc) : null;
      })
      .catch(() => null);
    validators.set(baseUrl, validator);
  }
  return validator;
}
