/** A row as Postgres's row_to_json hands it over: its timestamps as ISO 8601 strings. */
export type JsonRow<T> = {
  [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K];
};
