// Every operation's parameters, body and answer, read from the generated `paths` of openapi.json, so
// `call()` and `list()` accept exactly what the document allows and return what it answers.
import type { components, paths } from '#openapi';
import type { NewOrder, NewPet, RotateApiKey } from './schema';
import type { WebAbortSignal } from './web-types';

export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
/** The document's paths (without the `/v1` server prefix) that have an operation for `M`. */
export type PathFor<M extends HttpMethod> = {
  [P in keyof paths]: paths[P] extends Record<Lowercase<M>, object> ? P : never;
}[keyof paths];
type Operation<M extends HttpMethod, P extends PathFor<M>> = paths[P][Lowercase<M>];

type Parameters<O> = O extends { parameters: infer X } ? X : never;
type Part<O, K extends string> = Parameters<O> extends { [key in K]?: infer X } ? Exclude<X, undefined> : never;
type Json<C> = C extends { content: { 'application/json': infer B } } ? B : never;
type Schemas = components['schemas'];
/** openapi-typescript marks defaulted fields required (right for answers); a request may leave them out. */
type Sendable<B> = B extends Schemas['NewPet']
  ? NewPet
  : B extends Schemas['NewOrder']
    ? NewOrder
    : B extends Schemas['RotateApiKey']
      ? RotateApiKey
      : B;
type Body<O> = O extends { requestBody?: infer R } ? Sendable<Json<R>> : never;
type BodyRequired<O> = O extends { requestBody: object } ? true : false;

/** The body of a 2xx answer (undefined for 204). */
export type Success<M extends HttpMethod, P extends PathFor<M>> =
  Operation<M, P> extends { responses: infer R }
    ? { [S in keyof R]: S extends 200 | 201 | 202 ? Json<R[S]> : S extends 204 ? undefined : never }[keyof R]
    : never;

/** What one call may carry besides its parameters. */
export interface CallControl {
  /** Extra headers for this call (If-Match, Idempotency-Key...). */
  headers?: Record<string, string>;
  /** Send a fresh Idempotency-Key (the same on each retry of the call), unless `headers` has one. */
  idempotent?: boolean;
  /** Milliseconds each attempt may take (the client's `timeout` by default). */
  timeout?: number;
  /** Aborts the call, retries and waits included; it rejects with the signal's reason. */
  signal?: WebAbortSignal;
}

type IfAny<X, Then> = [X] extends [never] ? object : Then;
/** The path parameters, query filters and body an operation takes (those it requires, required). */
export type CallInit<M extends HttpMethod, P extends PathFor<M>> = CallControl &
  IfAny<Part<Operation<M, P>, 'path'>, { path: Part<Operation<M, P>, 'path'> }> &
  IfAny<Part<Operation<M, P>, 'query'>, { query?: Part<Operation<M, P>, 'query'> }> &
  IfAny<
    Body<Operation<M, P>>,
    BodyRequired<Operation<M, P>> extends true ? { body: Body<Operation<M, P>> } : { body?: Body<Operation<M, P>> }
  >;

/** `[init]` when the operation needs path parameters or a body, else `[init?]`. */
export type CallArgs<M extends HttpMethod, P extends PathFor<M>> =
  object extends CallInit<M, P> ? [init?: CallInit<M, P>] : [init: CallInit<M, P>];

/** The GET paths that answer a page (a JSON array): what `list()` iterates. */
export type ListPath = {
  [P in PathFor<'GET'>]: Success<'GET', P> extends readonly unknown[] ? P : never;
}[PathFor<'GET'>];
export type ListItem<P extends ListPath> = Success<'GET', P> extends readonly (infer T)[] ? T : never;
export type QueryOf<M extends HttpMethod, P extends PathFor<M>> = Part<Operation<M, P>, 'query'>;
export type BodyOf<M extends HttpMethod, P extends PathFor<M>> = Body<Operation<M, P>>;
