import { PetstoreClient } from '../../../packages/client/src/petstore-client';
import { PetstoreError } from '../../../packages/client/src/petstore-error';

/** The pasted key lives in this tab's sessionStorage only: never in a URL, a cookie or a log. */
const STORAGE_KEY = 'petstore.console.apiKey';

export const storedKey = (): string | null => sessionStorage.getItem(STORAGE_KEY);
export const rememberKey = (key: string): void => sessionStorage.setItem(STORAGE_KEY, key);
export const forgetKey = (): void => sessionStorage.removeItem(STORAGE_KEY);

/**
 * The SDK on this origin. No retries: a person is watching, and a 429 is information
 * (the console shows it) rather than something to wait out.
 */
export const clientFor = (apiKey: string): PetstoreClient =>
  new PetstoreClient({ apiKey, baseUrl: location.origin, maxRetries: 0 });

/** What a failed call shows: the Error body's message and code, never a stack. */
export function describeError(err: unknown): string {
  if (err instanceof PetstoreError) return `${err.message} (${err.status} ${err.code})`;
  return 'The service could not be reached; try again.';
}

/** The key no longer works (revoked, expired, rotated out): the console asks for another. */
export const isKeyRejected = (err: unknown): boolean => err instanceof PetstoreError && err.status === 401;

export { PetstoreClient, PetstoreError };
