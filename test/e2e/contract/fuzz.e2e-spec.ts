import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpClient, HttpResponse } from '../../support/http';
import { SchemaArbitraries } from '../../support/schema-arbitraries';
import { TestClock } from '../../support/test-clock';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

/**
 * Schema-driven fuzzing of EVERY operation in the document (new operations are fuzzed as soon
 * as they are in openapi.json): requests valid per the document must get 2xx or a documented
 * domain 4xx (404 for an id that does not exist, 409...), requests that break it must get a
 * documented 4xx; never a 5xx. HttpClient checks every answer against the contract as well.
 * FUZZ_RUNS (default 100) cases per operation and kind; FUZZ_SEED replays a run.
 */
type Json = Record<string, any>;

const document = JSON.parse(readFileSync(join(__dirname, '../../../openapi.json'), 'utf8')) as Json;
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const PREFIX = new URL(document.servers?.[0]?.url ?? '/', 'http://x').pathname.replace(/\/$/, '');
/** Answers a request valid per the document may not get: they would mean the document is too loose. */
const NOT_FOR_VALID = new Set([400, 401, 403, 413, 429]);
const NOT_FOR_INVALID = new Set([401, 403, 429]);
/** Ids far above anything the test database holds: they name no record. */
const MISSING_ID_BASE = 10 ** 12;

interface Operation {
  method: string;
  template: string;
  op: Json;
  parameters: Json[];
}

/** A path id drawn from the records this run created (index into the pool) or one that cannot exist. */
type PathValue = string | { pool: number };

interface Case {
  path: Record<string, PathValue>;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body?: unknown;
  /** What was broken, for invalid cases. */
  broken?: string;
}

/** Body properties marked `x-references` (field -> schema): ids of other records, which a random value may not name. */
function referenceFields(op: Json): Map<string, string> {
  const resolve = (s: Json | undefined): Json | undefined =>
    s?.$ref ? document.components.schemas[String(s.$ref).split('/').pop() as string] : s;
  const schema = resolve(op.requestBody?.content?.['application/json']?.schema);
  return new Map(
    Object.entries((schema?.properties ?? {}) as Record<string, Json>)
      .filter(([, p]) => p['x-references'])
      .map(([name, p]) => [name, String(p['x-references'])]),
  );
}

/** The collection whose POST creates records of this schema, e.g. Pet -> /pets. */
function collectionOf(schemaName: string): string | undefined {
  return Object.entries(document.paths as Record<string, Json>).find(([, item]) =>
    String(item.post?.responses?.['201']?.content?.['application/json']?.schema?.$ref ?? '').endsWith(`/${schemaName}`),
  )?.[0];
}

/** A documented 400 for a schema-valid request: every field it names refers to a record that does not exist. */
function namesMissingReference(operation: Operation, res: HttpResponse): boolean {
  const body = res.body as Json;
  const refs = referenceFields(operation.op);
  const fields = ((body?.details ?? []) as Json[]).map((d) => String(d.field));
  return (
    res.status === 400 && body?.code === 'validation_failed' && fields.length > 0 && fields.every((f) => refs.has(f))
  );
}

const RANK: Record<string, number> = { get: 1, put: 2, patch: 2, post: 3, delete: 4 };
const operations: Operation[] = Object.entries(document.paths as Record<string, Json>)
  .flatMap(([template, item]) =>
    Object.keys(RANK)
      .filter((m) => item[m])
      .map((method) => ({
        method,
        template,
        op: item[method],
        parameters: [...(item.parameters ?? []), ...(item[method].parameters ?? [])] as Json[],
      })),
  )
  // Creations first (they fill the id pools), deletions last.
  .sort((a, b) => rank(a) - rank(b) || a.template.localeCompare(b.template));

function rank(o: Operation): number {
  return o.method === 'post' && !o.template.endsWith('}') && !o.template.includes('{') ? 0 : RANK[o.method];
}

describe('schema-driven fuzzing of every operation', () => {
  // Webhook targets stay on a closed loopback port: no delivery may ever leave this machine.
  const loopbackUrls = fc.webPath().map((path) => `http://127.0.0.1:9${path.startsWith('/') ? path : `/${path}`}`);
  const schemas = new SchemaArbitraries(document, loopbackUrls);
  /** Ids of records created by this run, per collection path (e.g. /keys -> [3, 4]). */
  const pools = new Map<string, (string | number)[]>();
  let api: RunningApi;
  let http: HttpClient;
  /** Moved a minute before each call of an operation with a budget of its own (x-metering), which RUNS would spend. */
  const clock = new TestClock();

  beforeAll(async () => {
    process.stdout.write(`fuzz: seed ${SEED}, ${RUNS} runs per operation and kind (replay: FUZZ_SEED=${SEED})\n`);
    api = await startApi({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }, { clock });
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 10_000_000, limitPerDay: 100_000_000 });
    http = new HttpClient(api.url, apiKey);
  });
  afterAll(async () => {
    // Leave no subscription behind for workers of later test files to deliver to.
    for (const id of pools.get('/webhooks') ?? []) await http.delete(`${PREFIX}/webhooks/${id}`);
    await api.close();
  });

  it('has operations to fuzz', () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  operations.forEach((operation, index) => {
    const { method, template, op } = operation;
    const name = `${method.toUpperCase()} ${template} (${op.operationId})`;

    it(`${name}: valid requests get 2xx or a documented domain 4xx, never a 5xx`, async () => {
      let succeeded = 0;
      await check(index * 2, validCase(operation), async (c, res) => {
        if (res.status < 300) succeeded++;
        if (res.status >= 500 || (NOT_FOR_VALID.has(res.status) && !namesMissingReference(operation, res))) {
          throw new Error(`valid request answered ${res.status}: ${res.text.slice(0, 300)}`);
        }
        if (res.status < 300 && method === 'post' && !template.includes('{')) {
          const id = (res.body as Json)?.id;
          if (typeof id === 'number' || typeof id === 'string')
            pools.set(template, [...(pools.get(template) ?? []), id]);
        }
      });
      // Without path ids (which may name no record) a valid request must be able to succeed.
      if (!template.includes('{')) expect(succeeded).toBeGreaterThan(0);
    }, 120_000);

    it(`${name}: invalid requests get a documented 4xx, never a 2xx or 5xx`, async () => {
      const invalid = invalidCase(operation);
      if (!invalid) return; // nothing in this operation can be malformed (no body, no constrained parameter)
      await check(index * 2 + 1, invalid, async (c, res) => {
        if (res.status < 400 || res.status >= 500 || NOT_FOR_INVALID.has(res.status)) {
          throw new Error(`invalid request (${c.broken}) answered ${res.status}: ${res.text.slice(0, 300)}`);
        }
      });
    }, 120_000);

    async function check(
      offset: number,
      cases: fc.Arbitrary<Case>,
      verify: (c: Case, res: HttpResponse) => Promise<void>,
    ) {
      try {
        await fc.assert(
          fc.asyncProperty(cases, async (c) => verify(c, await send(c))),
          { numRuns: RUNS, seed: SEED + offset },
        );
      } catch (err) {
        (err as Error).message += `\n(replay the whole run with FUZZ_SEED=${SEED})`;
        throw err;
      }
    }

    function send(c: Case): Promise<HttpResponse> {
      if (op['x-metering']?.budget) clock.advance(60_000);
      const path = template.replace(/\{([^}]+)\}/g, (_, p: string) =>
        encodeURIComponent(resolvePath(template, p, c.path[p])),
      );
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(c.query)) for (const one of [v].flat()) query.append(k, one);
      const qs = query.toString();
      return http.request(method.toUpperCase(), `${PREFIX}${path}${qs ? `?${qs}` : ''}`, {
        body: c.body,
        headers: c.headers,
      });
    }
  });

  function resolvePath(template: string, param: string, value: PathValue): string {
    if (typeof value === 'string') return value;
    const collection = template.slice(0, template.indexOf(`/{${param}}`));
    const pool = pools.get(collection) ?? [];
    return String(pool.length ? pool[value.pool % pool.length] : MISSING_ID_BASE + value.pool);
  }

  function parameterArbitraries(operation: Operation, location: string) {
    return operation.parameters.filter((p) => p.in === location && !/^(authorization|content-type)$/i.test(p.name));
  }

  function validPath(p: Json): fc.Arbitrary<PathValue> {
    const s = schemas.resolve(p.schema);
    if (s.type !== 'integer') return schemas.validParameter(s);
    return fc.oneof(
      { weight: 3, arbitrary: fc.record({ pool: fc.nat() }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 1e9 }).map((n) => String(MISSING_ID_BASE + n)) },
    );
  }

  function validQueryValue(p: Json): fc.Arbitrary<string | string[]> {
    const s = schemas.resolve(p.schema);
    if (s.type === 'array')
      return fc.array(schemas.validParameter(s.items), { minLength: s.minItems ?? 1, maxLength: 3 });
    return schemas.validParameter(s);
  }

  function validParts(operation: Operation) {
    const record = (params: Json[], arb: (p: Json) => fc.Arbitrary<unknown>) =>
      fc.record(Object.fromEntries(params.map((p) => [p.name, arb(p)])) as Record<string, fc.Arbitrary<unknown>>, {
        requiredKeys: params.filter((p) => p.required).map((p) => p.name) as string[],
      });
    const body = operation.op.requestBody?.content?.['application/json']?.schema;
    return {
      path: record(parameterArbitraries(operation, 'path'), validPath) as fc.Arbitrary<Case['path']>,
      query: record(parameterArbitraries(operation, 'query'), validQueryValue) as fc.Arbitrary<Case['query']>,
      headers: record(parameterArbitraries(operation, 'header'), (p) =>
        schemas.validParameter(p.schema),
      ) as fc.Arbitrary<Case['headers']>,
      body: body ? withReferences(operation, schemas.valid(body)) : fc.constant(undefined),
    };
  }

  /** Most valid bodies name records this run created in their `x-references` fields, so creations can succeed. */
  function withReferences(operation: Operation, bodies: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
    const refs = referenceFields(operation.op);
    if (!refs.size) return bodies;
    return fc.tuple(bodies, fc.nat(), fc.integer({ min: 0, max: 3 })).map(([b, n, dice]) => {
      if (dice === 0 || !b || typeof b !== 'object') return b;
      const out = { ...(b as Json) };
      for (const [field, schemaName] of refs) {
        const pool = pools.get(collectionOf(schemaName) ?? '') ?? [];
        if (field in out && pool.length) out[field] = pool[n % pool.length];
      }
      return out;
    });
  }

  function validCase(operation: Operation): fc.Arbitrary<Case> {
    return fc.record(validParts(operation)) as fc.Arbitrary<Case>;
  }

  /** A valid request with exactly one part broken: the body, one parameter, or a required parameter left out. */
  function invalidCase(operation: Operation): fc.Arbitrary<Case> | null {
    const parts = validParts(operation);
    const valid = fc.record(parts) as fc.Arbitrary<Case>;
    const breakers: fc.Arbitrary<Case>[] = [];
    const requestBody = operation.op.requestBody;
    const bodySchema = requestBody?.content?.['application/json']?.schema;
    const badBody = bodySchema ? schemas.invalid(bodySchema) : null;
    if (badBody) breakers.push(fc.tuple(valid, badBody).map(([c, body]) => ({ ...c, body, broken: 'body' })));
    if (requestBody?.required) breakers.push(valid.map((c) => ({ ...c, body: undefined, broken: 'no body' })));
    for (const location of ['path', 'query'] as const) {
      for (const p of parameterArbitraries(operation, location)) {
        const bad = schemas.invalidParameter(p.schema);
        if (bad) {
          breakers.push(
            fc.tuple(valid, bad).map(([c, v]) => ({
              ...c,
              [location]: { ...c[location], [p.name]: v },
              broken: `${location} parameter ${p.name}=${JSON.stringify(v)}`,
            })),
          );
        }
        if (location === 'query' && p.required) {
          breakers.push(
            valid.map((c) => ({
              ...c,
              query: Object.fromEntries(Object.entries(c.query).filter(([k]) => k !== p.name)),
              broken: `query parameter ${p.name} missing`,
            })),
          );
        }
      }
    }
    return breakers.length ? fc.oneof(...breakers) : null;
  }
});
