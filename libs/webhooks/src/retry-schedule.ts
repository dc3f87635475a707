/** Longest wait between two attempts, so a long outage is still retried a few times a day. */
const MAX_DELAY_MS = 6 * 3600 * 1000;

/**
 * Delay before the next attempt after `failures` failed ones: exponential (base, 2x base,
 * 4x base...) capped at 6 h, with "equal jitter" (a random half on top of a fixed half) so
 * many deliveries failing together do not retry in lockstep.
 */
export function retryDelayMs(failures: number, baseMs: number, random: () => number = Math.random): number {
  const exp = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}
