import fc from 'fast-check';

type Json = Record<string, any>;

const HOUR = 3_600_000;
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';
/**
 * Strings of any code point, control characters included, but not NUL: the document's
 * description says strings may not contain U+0000 (Postgres text cannot hold it).
 */
const anyString = (minLength: number, maxLength: number) =>
  fc
    .oneof(fc.string({ minLength, maxLength }), fc.string({ unit: 'binary', minLength, maxLength }))
    .map((s) => s.replace(/\0/g, '_'));

/**
 * fast-check arbitraries from the OpenAPI 3.0 schemas of a document: values that satisfy a
 * schema (valid) and values that certainly break it (invalid), for the fuzz suite.
 * Generated `date-time` values lie in the future (the only kind our inputs accept).
 */
export class SchemaArbitraries {
  constructor(
    private readonly document: Json,
    /** URLs for `format: uri`; tests keep them on loopback so nothing ever leaves the machine. */
    private readonly urls: fc.Arbitrary<string> = fc.webUrl(),
  ) {}

  resolve(schema: Json | undefined): Json {
    let s = schema ?? {};
    while (s.$ref)
      s = String(s.$ref)
        .slice(2)
        .split('/')
        .reduce<any>((n, p) => n[p], this.document);
    if (s.allOf) {
      const parts = (s.allOf as Json[]).map((p) => this.resolve(p));
      const own = { ...s };
      delete own.allOf;
      return parts.reduce(
        (acc, p) => ({
          ...acc,
          ...p,
          properties: { ...acc.properties, ...p.properties },
          required: [...(acc.required ?? []), ...(p.required ?? [])],
        }),
        own,
      );
    }
    return s;
  }

  valid(schema: Json | undefined, depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const base = this.validNonNull(s, depth);
    return s.nullable ? fc.option(base, { nil: null, freq: 5 }) : base;
  }

  private validNonNull(s: Json, depth: number): fc.Arbitrary<unknown> {
    if (s.enum) return fc.constantFrom(...(s.enum as unknown[]).filter((v) => v !== null));
    if (s.oneOf || s.anyOf) return fc.oneof(...(s.oneOf ?? s.anyOf).map((b: Json) => this.valid(b, depth + 1)));
    switch (s.type ?? (s.properties ? 'object' : undefined)) {
      case 'string':
        return this.validString(s);
      case 'integer':
        return fc.bigInt({ min: BigInt(lowerBound(s, true)), max: BigInt(upperBound(s, true)) }).map((n) => Number(n));
      case 'number':
        return fc.double({
          min: lowerBound(s, false),
          max: upperBound(s, false),
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const minLength = s.minItems ?? 0;
        const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 5, 5));
        const items = this.valid(s.items, depth + 1);
        return s.uniqueItems
          ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
          : fc.array(items, { minLength, maxLength });
      }
      case 'object': {
        const props = (s.properties ?? {}) as Record<string, Json>;
        const required = new Set<string>(s.required ?? []);
        return fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, this.valid(v, depth + 1)])), {
          requiredKeys: Object.keys(props).filter((k) => required.has(k)),
        });
      }
      default:
        return depth > 3 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
    }
  }

  private validString(s: Json): fc.Arbitrary<string> {
    const minLength = s.minLength ?? 0;
    const maxLength = Math.max(minLength, s.maxLength ?? Math.max(minLength, 40));
    switch (s.format) {
      case 'date-time':
        return futureDate().map((d) => d.toISOString());
      case 'date':
        return futureDate().map((d) => d.toISOString().slice(0, 10));
      case 'email':
        return fc.emailAddress();
      case 'uri':
      case 'url':
        return this.urls;
      case 'uuid':
        return fc.uuid();
    }
    if (s.pattern)
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= minLength && v.length <= maxLength);
    return fc.oneof(anyString(minLength, Math.min(maxLength, minLength + 40)), anyString(maxLength, maxLength));
  }

  /**
   * Values that break the schema; null when nothing can (an unconstrained schema). null breaks
   * every schema that is not nullable, optional properties included (IsOptional of libs/errors).
   */
  invalid(schema: Json | undefined, depth = 0): fc.Arbitrary<unknown> | null {
    const s = this.resolve(schema);
    const type = s.type ?? (s.properties ? 'object' : undefined);
    if (!type && !s.enum) return null;
    const options: fc.Arbitrary<unknown>[] = [];
    const wrong = wrongType(type);
    if (wrong) options.push(wrong);
    if (!s.nullable) options.push(fc.constant(null));
    if (s.enum) options.push(fc.string({ minLength: 1, maxLength: 20 }).filter((v) => !s.enum.includes(v)));
    if (type === 'string' && !s.enum) {
      options.push(anyString(0, Math.max(0, (s.maxLength ?? 10) - 1)).map((v) => `${v}\0`));
      if (s.maxLength !== undefined) options.push(anyString(s.maxLength + 1, s.maxLength + 20));
      if (s.minLength) options.push(anyString(0, s.minLength - 1));
      if (s.format === 'date-time' || s.format === 'date') options.push(fc.constantFrom('yesterday', '2026-13-45', ''));
      if (s.format === 'uuid' || s.format === 'email' || s.format === 'uri')
        options.push(fc.constantFrom('not a ' + s.format));
    }
    if (type === 'integer' || type === 'number') {
      const integer = type === 'integer';
      if (s.minimum !== undefined) options.push(outside(s.minimum, -1, integer, s.exclusiveMinimum));
      if (s.maximum !== undefined) options.push(outside(s.maximum, 1, integer, s.exclusiveMaximum));
      if (integer) options.push(fc.integer({ min: -1e6, max: 1e6 }).map((n) => n + 0.5));
    }
    if (type === 'array') {
      if (s.maxItems !== undefined)
        options.push(
          fc.array(this.valid(s.items, depth + 1), { minLength: s.maxItems + 1, maxLength: s.maxItems + 3 }),
        );
      if (s.minItems) options.push(fc.array(this.valid(s.items, depth + 1), { maxLength: s.minItems - 1 }));
      const badItem = depth < 3 ? this.invalid(s.items, depth + 1) : null;
      if (badItem)
        options.push(fc.tuple(this.valid(s, depth + 1), badItem).map(([arr, bad]) => [...(arr as unknown[]), bad]));
    }
    if (type === 'object') {
      const valid = this.valid({ ...s, nullable: false }, depth + 1) as fc.Arbitrary<Json>;
      for (const key of (s.required ?? []) as string[]) {
        options.push(valid.map((o) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key))));
      }
      for (const [key, prop] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
        const bad = depth < 3 ? this.invalid(prop, depth + 1) : null;
        if (bad) options.push(fc.tuple(valid, bad).map(([o, v]) => ({ ...o, [key]: v })));
      }
      if (s.additionalProperties === false) {
        options.push(valid.map((o) => ({ ...o, unexpectedField: 'x' })));
      }
    }
    return fc.oneof(...options);
  }

  /** A parameter value as it travels in a path, query or header: a string. */
  validParameter(schema: Json | undefined): fc.Arbitrary<string> {
    const s = this.resolve(schema);
    if (s.type === 'string' && !s.enum && !s.format && !s.pattern) {
      const minLength = Math.max(1, s.minLength ?? 1);
      const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 40, 40));
      return fc.string({ unit: fc.constantFrom(...ALNUM), minLength, maxLength });
    }
    return this.valid({ ...s, nullable: false }).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  }

  /** Parameter strings that break the schema (none for a free string). */
  invalidParameter(schema: Json | undefined): fc.Arbitrary<string> | null {
    const s = this.resolve(schema);
    const options: fc.Arbitrary<string>[] = [];
    if (s.enum)
      options.push(
        fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 12 }).filter((v) => !s.enum.includes(v)),
      );
    if (s.type === 'integer' || s.type === 'number') {
      const integer = s.type === 'integer';
      options.push(fc.constantFrom('abc', '1e', 'NaN', '--1', '0x10'));
      if (integer) options.push(fc.constantFrom('1.5', '2.0001', '99999999999999999999999'));
      if (s.minimum !== undefined) options.push(outside(s.minimum, -1, integer, s.exclusiveMinimum).map(String));
      if (s.maximum !== undefined) options.push(outside(s.maximum, 1, integer, s.exclusiveMaximum).map(String));
    }
    if (s.type === 'boolean') options.push(fc.constantFrom('yes', 'maybe', '2'));
    if (s.type === 'string' && !s.enum) options.push(fc.constantFrom('a\0', '\0'));
    if (s.type === 'string' && s.maxLength !== undefined)
      options.push(
        fc.string({ unit: fc.constantFrom(...ALNUM), minLength: s.maxLength + 1, maxLength: s.maxLength + 10 }),
      );
    if (s.type === 'string' && (s.format === 'date-time' || s.format === 'date'))
      options.push(fc.constantFrom('yesterday'));
    return options.length ? fc.oneof(...options) : null;
  }
}

const futureDate = () =>
  fc.date({ min: new Date(Date.now() + HOUR), max: new Date(Date.now() + 5 * 365 * 24 * HOUR), noInvalidDate: true });

function lowerBound(s: Json, integer: boolean): number {
  if (s.minimum === undefined) return integer ? -Number.MAX_SAFE_INTEGER : -1e12;
  return s.exclusiveMinimum ? s.minimum + (integer ? 1 : 1e-6) : s.minimum;
}

function upperBound(s: Json, integer: boolean): number {
  if (s.maximum === undefined) return integer ? Number.MAX_SAFE_INTEGER : 1e12;
  return s.exclusiveMaximum ? s.maximum - (integer ? 1 : 1e-6) : s.maximum;
}

/** A number beyond a bound: below it (direction -1) or above it (+1). */
function outside(bound: number, direction: -1 | 1, integer: boolean, exclusive?: boolean): fc.Arbitrary<number> {
  const first = exclusive ? bound : bound + direction * (integer ? 1 : 1e-3);
  return fc.integer({ min: 0, max: 1_000_000 }).map((d) => first + direction * d);
}

function wrongType(type: string | undefined): fc.Arbitrary<unknown> | null {
  const others: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.oneof(fc.integer(), fc.maxSafeInteger()),
    number: fc.string({ maxLength: 8 }),
    integer: fc.string({ maxLength: 8 }),
    boolean: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
    array: fc.oneof(fc.string({ maxLength: 8 }), fc.object({ maxDepth: 1 })),
    object: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.array(fc.integer(), { maxLength: 3 })),
  };
  return type ? (others[type] ?? null) : null;
}
