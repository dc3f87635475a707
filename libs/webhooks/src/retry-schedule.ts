/** Longest wait between two attempts, so a long outage is still retried a few times a day. */
const MAX_DELAY_MS = 6 * 3600 * 1000;

/** "Equal jitter" (a random half on top of a fixed half), so deliveries failing together do not retry in lockstep. */
export function retryDelayMs(failures: number, baseMs: number, random: () => number = Math.random): number {
  const exp = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * The most attempts one delivery of an event makes before its horizon (`maxAgeMs` after the event): every retry at the
 * shortest jitter, attempts taking no time. docs/security.md states it for the defaults (33); a resend goes on from
 * the attempts its event made, so it adds its first attempt alone.
 */
export function maxAttempts(baseMs: number, maxAgeMs: number): number {
  let attempts = 1;
  for (let at = retryDelayMs(1, baseMs, () => 0); at <= maxAgeMs; at += retryDelayMs(attempts, baseMs, () => 0))
    attempts++;
  return attempts;
}
