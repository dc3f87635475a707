/**
 * The web platform types the public API names, taken from the user's own globals (lib "dom" or @types/node)
 * when there, else minimal stand-ins: a project with neither still type-checks (@types/node's own device).
 */
type Global<Name extends string, Fallback> = typeof globalThis extends Record<Name, { prototype: infer T }>
  ? T
  : Fallback;

export type WebHeaders = Global<'Headers', { get(name: string): string | null; has(name: string): boolean }>;
export type WebAbortSignal = Global<'AbortSignal', { readonly aborted: boolean; readonly reason: unknown }>;
export type WebReadableStream = Global<'ReadableStream', { getReader(): unknown }>;
export type WebFetch = typeof globalThis extends Record<'fetch', infer F> ? F : (...args: never[]) => Promise<unknown>;
