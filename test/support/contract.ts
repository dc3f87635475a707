import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

/** What was sent, for the request half of the check. */
export interface ObservedRequest {
  headers: Headers;
  /** The body as sent (absent: none). */
  body?: string;
}

/** What the validator needs of an exchange. */
export interface ObservedResponse {
  method: string;
  /** The request path, query string allowed (e.g. `/v1/keys?x=1`). */
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** When given, the request is checked against the operation too (see requestViolations). */
  request?: ObservedRequest;
}

export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

interface Route {
  template: string;
  pattern: RegExp;
  /** Names of the path parameters, in the order of the pattern's groups. */
  names: string[];
  item: Json;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** Bodies of these are not described by the document (HEAD has none; OPTIONS is CORS). */
const UNCHECKED_METHODS = new Set(['head', 'options']);
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
/**
 * Headers with a meaning in this API: when an answer carries one, its response must declare it
 * (a client generated from the document cannot read what is not declared).
 */
const MEANINGFUL_HEADERS = [
  'Location',
  'ETag',
  'Link',
  'Retry-After',
  'Allow',
  'Idempotent-Replayed',
  'Sunset',
  'Deprecation',
];
/** Query and path values arrive as text; the document describes them as typed values. */
function typed(value: string, schema: Json | undefined): unknown {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

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
        names: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
        pattern: new RegExp(
          `^${template
            .split(/\{[^}]+\}/)
            .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('([^/]+)')}$`,
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

  /** The violations of one exchange; empty when it keeps the contract or is not an API operation. */
  check(res: ObservedResponse): string[] {
    const method = res.method.toLowerCase();
    const path = res.path.split('?')[0];
    if (UNCHECKED_METHODS.has(method)) return [];
    if (this.prefix && path !== this.prefix && !path.startsWith(`${this.prefix}/`)) return [];
    if (this.unchecked.test(path)) return [];
    const relative = path.slice(this.prefix.length) || '/';
    const matching = this.routes.filter((r) => r.pattern.test(relative));
    const route = matching.find((r) => r.item[method]);
    if (!route) {
      if (!this.notFound) return ['the document has no 404 answer to check this one against'];
      if (matching.length) return this.checkMethodNotAllowed(res, matching);
      if (res.status !== 404)
        return [`no operation matches, so the answer must be a documented 404, not ${res.status}`];
      return this.checkResponse(res, this.notFound.pointer, this.notFound.response);
    }
    const op = route.item[method];
    const responses = op.responses as Record<string, Json>;
    const key = [String(res.status), `${String(res.status)[0]}XX`, 'default'].find((k) => responses[k]);
    const violations = key
      ? this.checkResponse(res, `/paths/${escapePointer(route.template)}/${method}/responses/${key}`, responses[key])
      : [`status ${res.status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    if (res.request) violations.push(...this.checkRequestAgainstAnswer(res, route, method, relative));
    return violations;
  }

  /**
   * The request half. A request the document calls invalid must not succeed (the API would
   * accept what the document refuses: D6, `{"name": null}` answered 200), and parameters the
   * document calls valid must not be refused as `invalid_parameter` (the document would promise
   * what the API refuses: D3, ids above 2^53-1).
   */
  private checkRequestAgainstAnswer(res: ObservedResponse, route: Route, method: string, relative: string): string[] {
    // Query parameters the operation does not declare: OAS does not forbid them, the API refuses
    // them (400) where the operation takes a query; either answer keeps the contract.
    const { params, body, undeclared } = this.requestViolations(res, route, method, relative);
    const broken = [...params, ...body];
    if (broken.length && res.status < 400)
      return [`the request breaks the document (${broken.join('; ')}) yet was answered ${res.status}`];
    if (
      !params.length &&
      !undeclared.length &&
      res.status === 400 &&
      /"code"\s*:\s*"invalid_parameter"/.test(res.text) &&
      !/%00/i.test(res.path)
    )
      return ['parameters the document calls valid were refused with invalid_parameter'];
    return [];
  }

  /** What of the request breaks the operation's parameters and its request body, and the query names it does not declare. */
  private requestViolations(
    res: ObservedResponse,
    route: Route,
    method: string,
    relative: string,
  ): { params: string[]; body: string[]; undeclared: string[] } {
    const request = res.request!;
    const pointer = `/paths/${escapePointer(route.template)}/${method}`;
    const op = route.item[method];
    const declared = [
      ...((route.item.parameters ?? []) as Json[]).map((p, i) => ({
        p,
        at: `/paths/${escapePointer(route.template)}/parameters/${i}`,
      })),
      ...((op.parameters ?? []) as Json[]).map((p, i) => ({ p, at: `${pointer}/parameters/${i}` })),
    ].map(({ p, at }) => (p.$ref ? { p: this.deref(p), at: String(p.$ref).slice(1) } : { p, at }));
    const params: string[] = [];
    const pathValues = route.pattern.exec(relative)!.slice(1);
    const query = new URL(res.path, 'http://x').searchParams;
    for (const { p, at } of declared) {
      let raw: string | null = null;
      if (p.in === 'path') {
        try {
          raw = decodeURIComponent(pathValues[route.names.indexOf(p.name)]);
        } catch {
          params.push(`path parameter ${p.name} is not valid percent-encoding`);
          continue;
        }
      } else if (p.in === 'query') {
        raw = query.get(p.name);
        if (query.getAll(p.name).length > 1 && this.deref(p.schema ?? {}).type !== 'array')
          params.push(`query parameter ${p.name} is given more than once`);
      } else if (p.in === 'header') raw = request.headers.get(p.name);
      else continue;
      if (raw === null) {
        if (p.required) params.push(`required ${p.in} parameter ${p.name} is missing`);
        continue;
      }
      if (!p.schema) continue;
      const errors = this.validate(`${at}/schema`, `${at}/schema`, typed(raw, this.deref(p.schema)));
      params.push(...errors.map((e) => `${p.in} parameter ${p.name}="${raw}"${e}`));
    }
    const names = new Set(declared.filter(({ p }) => p.in === 'query').map(({ p }) => p.name));
    const undeclared = [...new Set(query.keys())].filter((n) => !names.has(n));
    const body: string[] = [];
    const content = (op.requestBody?.content ?? {}) as Record<string, Json>;
    if (request.body !== undefined && request.body !== '') {
      const contentType = request.headers.get('content-type') ?? '';
      const type = Object.keys(content).find((m) => contentType.startsWith(m));
      if (!type) body.push(`a body of type "${contentType}" is not documented`);
      else if (content[type].schema) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(request.body);
        } catch {
          body.push('the body is not valid JSON');
        }
        if (parsed !== undefined) {
          const schema = `${pointer}/requestBody/content/${escapePointer(type)}/schema`;
          body.push(...this.validate(schema, schema, parsed).map((e) => `body${e}`));
        }
      }
    }
    return { params, body, undeclared };
  }

  /**
   * A documented path asked with a method it does not list: 405 method_not_allowed with Allow
   * naming exactly the documented methods (HEAD with GET), as an Error body with the headers
   * every gated answer has.
   */
  private checkMethodNotAllowed(res: ObservedResponse, matching: Route[]): string[] {
    if (res.status !== 405)
      return [`the path is documented without ${res.method}, so the answer must be 405, not ${res.status}`];
    const { pointer, response } = this.notFound!;
    const allowHeader = { required: true, schema: { type: 'string' } };
    const violations = this.checkResponse(res, pointer, {
      ...response,
      headers: { ...response.headers, Allow: allowHeader },
    });
    const methods = [...new Set(matching.flatMap((r) => HTTP_METHODS.filter((m) => r.item[m])))].map((m) =>
      m.toUpperCase(),
    );
    if (methods.includes('GET')) methods.push('HEAD');
    const allow = (res.headers.get('allow') ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    if (allow.sort().join() !== methods.sort().join())
      violations.push(
        `Allow "${res.headers.get('allow') ?? ''}" must name the documented methods ${methods.join(', ')}`,
      );
    if (!/"code"\s*:\s*"method_not_allowed"/.test(res.text)) violations.push('the code must be method_not_allowed');
    return violations;
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

  private checkResponse(res: ObservedResponse, pointer: string, declaredResponse: Json): string[] {
    const violations: string[] = [];
    const response = this.deref(declaredResponse);
    if (declaredResponse.$ref) pointer = String(declaredResponse.$ref).slice(1);
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
    const declaredHeaders = Object.keys(response.headers ?? {}).map((n) => n.toLowerCase());
    for (const name of MEANINGFUL_HEADERS) {
      if (res.headers.has(name) && !declaredHeaders.includes(name.toLowerCase()))
        violations.push(`header ${name} is sent but not declared for this answer`);
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
    if (!node?.$ref) return node;
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
 * The document with every schema made plain JSON Schema for ajv, read as OAS 3.0.3 says:
 * `nullable: true` adds null to the schema's own `type` only, so the other keywords of that
 * schema (an allOf of a model, an enum) still apply to null, and beside a `$ref` (whose
 * siblings are ignored) it does nothing. Object schemas are closed (additionalProperties:
 * false) unless they say otherwise or are composed with allOf (closing those would reject the
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
    if (schema.$ref) return { $ref: schema.$ref };
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
    if (out.nullable && typeof out.type === 'string') out.type = [out.type, 'null'];
    delete out.nullable;
    return out;
  };
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) {
    schemas[name] = convert(schema, !composed.has(`#/components/schemas/${name}`));
  }
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of HTTP_METHODS.map((m) => item[m]).filter(Boolean)) {
      for (const media of Object.values((op.requestBody?.content ?? {}) as Record<string, Json>)) {
        if (media.schema) media.schema = convert(media.schema, true);
      }
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
