import { getMetadataStorage } from 'class-validator';

/** The parts of class-validator's MetadataStorage this cache wraps (class-validator 0.14). */
interface Storage {
  getTargetValidationMetadatas(
    target: object,
    schema: string | undefined,
    always: boolean,
    strictGroups: boolean,
    groups?: string[],
  ): object[];
  groupByPropertyName(metadatas: object[]): Record<string, object[]>;
  addValidationMetadata(metadata: object): void;
  addConstraintMetadata(metadata: object): void;
}

const WRAPPED = Symbol('petstore.validationMetadataCache');

// class-validator filters its whole metadata store (every DTO, and an instanceof check per class for inherited rules)
// and groups the result anew on every validate(); the rules of a class change only when a decorator runs, at boot.
// So both answers are kept per class and options until a decorator adds a rule (docs/internals/decisions/0044-validation-fast-paths.md).
// Throws at boot if a class-validator release no longer has the methods it wraps (validation-metadata-cache.spec.ts).
export function cacheValidationMetadata(): void {
  const storage = getMetadataStorage() as unknown as Storage & { [WRAPPED]?: true };
  if (storage[WRAPPED]) return;
  for (const method of [
    'getTargetValidationMetadatas',
    'groupByPropertyName',
    'addValidationMetadata',
    'addConstraintMetadata',
  ] as const) {
    if (typeof storage[method] !== 'function')
      throw new Error(
        `class-validator's metadata storage has no ${method}: the validation metadata cache needs updating`,
      );
  }
  let byTarget = new Map<object, Map<string, object[]>>();
  let grouped = new WeakMap<object[], Record<string, object[]>>();
  const forget = () => {
    byTarget = new Map();
    grouped = new WeakMap();
  };
  const { getTargetValidationMetadatas, groupByPropertyName, addValidationMetadata, addConstraintMetadata } = storage;
  storage.getTargetValidationMetadatas = function (target, schema, always, strictGroups, groups) {
    const key = `${schema ?? ''}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0001') ?? ''}`;
    let forTarget = byTarget.get(target);
    if (!forTarget) byTarget.set(target, (forTarget = new Map()));
    let metadatas = forTarget.get(key);
    if (!metadatas)
      forTarget.set(
        key,
        (metadatas = getTargetValidationMetadatas.call(this, target, schema, always, strictGroups, groups)),
      );
    return metadatas;
  };
  storage.groupByPropertyName = function (metadatas) {
    let byProperty = grouped.get(metadatas);
    if (!byProperty) grouped.set(metadatas, (byProperty = groupByPropertyName.call(this, metadatas)));
    return byProperty;
  };
  storage.addValidationMetadata = function (metadata) {
    forget();
    addValidationMetadata.call(this, metadata);
  };
  storage.addConstraintMetadata = function (metadata) {
    forget();
    addConstraintMetadata.call(this, metadata);
  };
  storage[WRAPPED] = true;
}
