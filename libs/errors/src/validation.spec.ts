import { Transform } from 'class-transformer';
import { IsInt, IsString, Max } from 'class-validator';
import { ApiValidationPipe, IsOptional, MemoizedQuery } from './validation';

class NoteDto {
  static acceptsBody(body: unknown): boolean {
    return typeof (body as { note?: unknown }).note === 'string';
  }

  @IsString()
  note!: string;
}

describe('ApiValidationPipe', () => {
  const pipe = new ApiValidationPipe();

  it('answers a body its DTO accepts by itself with an instance of the DTO, without a promise', () => {
    const dto = pipe.transform({ note: 'hi' }, { type: 'body', metatype: NoteDto });

    expect(dto).toBeInstanceOf(NoteDto);
    expect(dto).toEqual({ note: 'hi' });
  });
});

@MemoizedQuery()
class LimitQuery {
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? Number(value) : value))
  @IsInt()
  @Max(100)
  limit?: number;
}

describe('ApiValidationPipe on a memoized query', () => {
  const pipe = new ApiValidationPipe();
  const query = (value: object) => pipe.transform(value, { type: 'query', metatype: LimitQuery });

  it('answers a query it validated before with the same frozen DTO, without a promise', async () => {
    const first = await query({ limit: '20' });
    const again = query({ limit: '20' });

    expect(again).toBe(first);
    expect(Object.isFrozen(again)).toBe(true);
    expect(again).toEqual({ limit: 20 });
  });

  it('refuses an invalid query every time', async () => {
    await expect(query({ limit: '500' })).rejects.toMatchObject({ code: 'invalid_parameter' });
    await expect(query({ limit: '500' })).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});

class NewThingDto {
  @IsInt()
  @Max(10)
  count!: number;

  @IsString()
  name!: string;

  @IsOptional()
  @IsString()
  note?: string;
}

describe('ApiValidationPipe on a required field left out', () => {
  const pipe = new ApiValidationPipe();

  it('answers one detail per missing field, `required`, not every rule the value would have broken', async () => {
    const refused = await Promise.resolve(pipe.transform({ name: 'x' }, { type: 'body', metatype: NewThingDto })).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({
      code: 'validation_failed',
      message: 'count: required',
      details: [{ field: 'count', message: 'required' }],
    });
    const empty = await Promise.resolve(pipe.transform(undefined, { type: 'body', metatype: NewThingDto })).catch(
      (err: unknown) => err,
    );
    expect(empty).toMatchObject({
      details: [
        { field: 'count', message: 'required' },
        { field: 'name', message: 'required' },
      ],
    });
  });

  it('keeps the rules for a value that is there but wrong', async () => {
    const refused = await Promise.resolve(
      pipe.transform({ count: 11, name: 'x' }, { type: 'body', metatype: NewThingDto }),
    ).catch((err: unknown) => err);
    expect(refused).toMatchObject({ details: [{ field: 'count', message: 'count must not be greater than 10' }] });
  });
});
