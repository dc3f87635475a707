import { IsString } from 'class-validator';
import { ApiValidationPipe } from './validation';

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
