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
