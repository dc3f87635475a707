import { Injectable, Type } from '@nestjs/common';

/** A provider class made from a plain object, marked for discovery, named after it (`usage_hours`: UsageHours<role>). */
export function declaredProvider<T extends { name: string }>(source: T, mark: ClassDecorator, role: string): Type<T> {
  @Injectable()
  @mark
  class Declared {
    constructor() {
      Object.assign(this, source);
    }
  }
  const className = source.name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase()) + role;
  Object.defineProperty(Declared, 'name', { value: className });
  return Declared as unknown as Type<T>;
}
