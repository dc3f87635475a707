import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidateBy, ValidateIf } from 'class-validator';
import { ApiError, ErrorDetail } from './api-error';
import { dateTimeProblem, parseDateTime } from './input-rules';

/** What a field left out answers: one detail, not every rule the value it lacks would have broken. */
export const REQUIRED_MESSAGE = 'required';

// A field with rules and no value is a required one (IsOptional skips the rules of an optional field left out).
function flatten(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    if (e.value === undefined && e.constraints) return [{ field, message: REQUIRED_MESSAGE }];
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/** A class with validation rules (a DTO), not a primitive's constructor. */
const isDto = (metatype: ArgumentMetadata['metatype']) =>
  !!metatype && ![String, Number, Boolean, Object, Array].includes(metatype as never);

class DtoValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      // The value only tells flatten() that a field was left out; details never carry it.
      validationError: { target: false, value: true },
      exceptionFactory: (errors) => flatten(errors),
    });
  }

  // Path parameters stay strings: Number('0x10') would hand 16 to ParseIdPipe, which refuses hex.
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' ? value : super.transformPrimitive(value, metadata);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A DTO whose fields are all optional needs no body.
    if (metadata.type === 'body' && value === undefined) value = {};
    if (metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      if (metadata.metatype && metadata.metatype !== Object) {
        throw new ApiError('validation_failed', 'The request body must be a JSON object', [
          { field: 'body', message: 'must be a JSON object' },
        ]);
      }
    }
    try {
      return await super.transform(value, metadata);
    } catch (details) {
      if (!Array.isArray(details)) throw details;
      const code = metadata.type === 'body' ? 'validation_failed' : 'invalid_parameter';
      const summary = (details as ErrorDetail[]).map((d) => `${d.field}: ${d.message}`).join('; ');
      throw new ApiError(code, summary || 'Invalid input', details as ErrorDetail[]);
    }
  }
}

/**
 * A body DTO that recognises a valid body by itself, without class-validator's instances and promises. It must accept
 * only bodies class-validator accepts; whatever it does not accept still goes through class-validator, which writes
 * the error details.
 */
export interface QuickBodyCheck {
  acceptsBody(body: unknown): boolean;
}

const acceptedAtOnce = (metatype: ArgumentMetadata['metatype'], body: unknown) =>
  typeof (metatype as Partial<QuickBodyCheck> | undefined)?.acceptsBody === 'function' &&
  (metatype as unknown as QuickBodyCheck).acceptsBody(body);

/** Valid queries of each memoized query DTO, by their JSON; emptied when full, so a client's distinct queries stay bounded. */
const memoized = new Map<unknown, Map<string, object>>();
const MEMOIZED_QUERIES_PER_DTO = 1_000;

/**
 * A query DTO whose checks depend on the query alone (no clock, no other input): a query validated once is answered
 * with the same frozen DTO, without class-validator. A list's first page is most of its traffic.
 */
export const MemoizedQuery = (): ClassDecorator => (target) => void memoized.set(target, new Map());

/** The global pipe: DTOs (bodies, queries, parameter objects) through class-validator. */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  private readonly dtos = new DtoValidationPipe();

  private async remember(known: Map<string, object>, key: string, value: unknown, metadata: ArgumentMetadata) {
    const dto = Object.freeze((await this.dtos.transform(value, metadata)) as object);
    if (known.size >= MEMOIZED_QUERIES_PER_DTO) known.clear();
    known.set(key, dto);
    return dto;
  }

  // Nothing to validate in a custom decorator's value or a path parameter (a string): answered without a promise.
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'custom' || (metadata.type === 'param' && !isDto(metadata.metatype))) return value;
    // As class-transformer would make it: an instance of the DTO with the body's properties.
    if (metadata.type === 'body' && acceptedAtOnce(metadata.metatype, value))
      return Object.assign(new (metadata.metatype as new () => object)(), value);
    const known = metadata.type === 'query' ? memoized.get(metadata.metatype) : undefined;
    if (known) {
      const key = JSON.stringify(value);
      return known.get(key) ?? this.remember(known, key, value, metadata);
    }
    return this.dtos.transform(value, metadata);
  }
}

/** int64 in the interface; we accept 1..2^53-1. */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    const n = /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n)) {
      const field = metadata.data ?? 'id';
      throw new ApiError('invalid_parameter', `${field} must be a positive integer`, [
        { field, message: 'must be a positive integer' },
      ]);
    }
    return n;
  }
}

// Only an RFC 3339 string naming an instant IsDateTime takes becomes a Date: `@Type(() => Date)` would also
// turn numbers, booleans and "2026" into dates that the document calls invalid.
export function toDateTime({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && !dateTimeProblem(value) ? parseDateTime(value) : value;
}

/**
 * A `format: date-time` input: any RFC 3339 date-time (years 0000-9999, `T`/`t`, `Z`/`z` or an offset, any fraction, a
 * leap second) naming an instant in years 0000-9999 of UTC. Each detail says which of those the value missed. With
 * `@Transform(toDateTime)` before it, the field holds a Date.
 */
export const IsDateTime = (): PropertyDecorator =>
  ValidateBy({
    name: 'isDateTime',
    validator: {
      validate: (value: unknown) => value instanceof Date || !dateTimeProblem(value),
      defaultMessage: (args) => dateTimeProblem(args?.value) ?? 'must be an RFC 3339 date-time',
    },
  });

// `null` only where `nullable` says so. class-validator's own IsOptional skips every validator for
// `null` too (eslint forbids importing it).
export function IsOptional({ nullable = false }: { nullable?: boolean } = {}): PropertyDecorator {
  const notNull = ValidateBy({
    name: 'isNotNull',
    validator: { validate: (value: unknown) => value !== null, defaultMessage: () => '$property must not be null' },
  });
  const skip = ValidateIf((_object: object, value: unknown) => value !== undefined && !(nullable && value === null));
  return (target, property) => {
    skip(target, property);
    notNull(target, property);
  };
}
