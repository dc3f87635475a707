/** Each column of a row type once, none missing and none extra: what a statement that returns rows declares. */
export type Columns<R> = { readonly [K in keyof R]-?: true };

/** A row type's columns, checked by TypeScript against `R` (and by sql-row-types.service-spec against the schema). */
export const columns = <R>(names: Columns<R>): Columns<R> => names;

/** The row of a statement asking whether a row exists: `SELECT 1 AS found`. */
export type Found = { found: number };
export const FOUND = columns<Found>({ found: true });

// Values never enter the text, so a statement built from optional filters still names one prepared statement per
// shape and cannot be injected. `R` is the row it returns, as its `columns` declare; an undeclared one returns any.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an undeclared statement's rows are the caller's to type
export class Sql<R = any> {
  private shape: object | undefined = undefined;
  declare readonly row?: R;

  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  get text(): string {
    return textOf(this.strings);
  }

  /** The names of the columns it returns (`returns`); undefined for a statement that declares none. */
  get columns(): string[] | undefined {
    return this.shape && Object.keys(this.shape);
  }

  /** Declares the row it returns: the caller reads rows of `T`, and the SQL spec checks the statement's column names. */
  returns<T>(names: Columns<T>): Sql<T> {
    this.shape = names;
    return this as unknown as Sql<T>;
  }
}

const join = (strings: readonly string[]) => strings.reduce((text, part, i) => `${text}$${i}${part}`);

/** A template's parts are one frozen array per call site: its text is joined once, and stays the same string. */
const templateTexts = new WeakMap<readonly string[], string>();

function textOf(strings: readonly string[]): string {
  if (!Object.isFrozen(strings)) return join(strings);
  let text = templateTexts.get(strings);
  if (text === undefined) templateTexts.set(strings, (text = join(strings)));
  return text;
}

/** Interpolated `Sql` fragments are spliced in, every other value becomes a parameter. */
export function sql(template: TemplateStringsArray, ...args: unknown[]): Sql {
  if (!args.some((arg) => arg instanceof Sql)) return new Sql(template, args);
  const strings = [template[0]];
  const values: unknown[] = [];
  args.forEach((arg, i) => {
    if (arg instanceof Sql) {
      strings[strings.length - 1] += arg.strings[0];
      strings.push(...arg.strings.slice(1));
      values.push(...arg.values);
    } else {
      values.push(arg);
      strings.push('');
    }
    strings[strings.length - 1] += template[i + 1];
  });
  return new Sql(strings, values);
}

/** Fixed text (a column list, an alias): never anything a client sent. */
export function raw(text: string): Sql {
  return new Sql([text], []);
}

export function joinSql(fragments: readonly Sql[], separator: string): Sql {
  if (fragments.length === 0) return raw('');
  return fragments.slice(1).reduce((all, fragment) => sql`${all}${raw(separator)}${fragment}`, fragments[0]);
}
