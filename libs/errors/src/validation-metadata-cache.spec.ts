import { getMetadataStorage, IsInt, IsString, MaxLength, validateSync } from 'class-validator';
import { IsOptional } from './validation';
import { cacheValidationMetadata } from './validation-metadata-cache';

class Base {
  @IsString()
  name!: string;
}

class Child extends Base {
  @IsInt()
  @IsOptional()
  age?: number;

  @IsString({ groups: ['strict'] })
  nick?: string;
}

const errorsOf = (value: object, groups?: string[]) =>
  validateSync(value, { whitelist: true, forbidNonWhitelisted: true, groups })
    .flatMap((e) => Object.keys(e.constraints ?? {}).map((c) => `${e.property}:${c}`))
    .sort();

describe('cacheValidationMetadata', () => {
  const cases: [string, () => object, string[]?][] = [
    ['a valid object', () => Object.assign(new Child(), { name: 'a', age: 1 })],
    ['a wrong type and an unknown field', () => Object.assign(new Child(), { name: 1, age: 'x', extra: true })],
    ['an inherited rule broken', () => Object.assign(new Child(), { age: 2 })],
    ['a rule of a group', () => Object.assign(new Child(), { name: 'a', nick: 3 }), ['strict']],
  ];
  const uncached = cases.map(([, make, groups]) => errorsOf(make(), groups));

  beforeAll(() => cacheValidationMetadata());

  it.each(cases.map((c, i) => [c[0], i] as const))('validates %s as class-validator does uncached', (_what, i) => {
    const [, make, groups] = cases[i];
    expect(errorsOf(make(), groups)).toEqual(uncached[i]);
    expect(errorsOf(make(), groups)).toEqual(uncached[i]);
  });

  it('answers a class the same rules each time, without filtering the store again', () => {
    const storage = getMetadataStorage();
    const first = storage.getTargetValidationMetadatas(Child, '', false, false);
    expect(storage.getTargetValidationMetadatas(Child, '', false, false)).toBe(first);
    expect(storage.groupByPropertyName(first)).toBe(storage.groupByPropertyName(first));
  });

  it('sees a rule a decorator adds after the first validation', () => {
    class Late {
      @IsString()
      title!: string;
    }
    expect(errorsOf(Object.assign(new Late(), { title: 'x'.repeat(10) }))).toEqual([]);
    MaxLength(3)(Late.prototype, 'title');
    expect(errorsOf(Object.assign(new Late(), { title: 'x'.repeat(10) }))).toEqual(['title:maxLength']);
  });
});
