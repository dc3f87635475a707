import { Logger } from '@nestjs/common';

/** After SHUTDOWN_GRACE_MS (in-flight work), closing pools and clients gets this long. */
export const CLOSE_BUDGET_MS = 2_000;

/**
 * The last resort after SIGTERM or SIGINT: whatever a shutdown step still waits for (a
 * connection that never answers, a timer that keeps the event loop alive), the process is gone
 * SHUTDOWN_GRACE_MS + CLOSE_BUDGET_MS after the signal, with one line saying so and exit code 1.
 * Arm it where the process installs its own signal handlers: a listener on these signals
 * replaces Node's default of exiting at once.
 */
export function armShutdownWatchdog(graceMs: number): void {
  const signals = ['SIGTERM', 'SIGINT'] as const;
  const onSignal = (signal: NodeJS.Signals): void => {
    // Gone after the first signal, so a handler that re-raises it (Nest's) still ends the process.
    for (const s of signals) process.removeListener(s, onSignal);
    const limitMs = graceMs + CLOSE_BUDGET_MS;
    setTimeout(() => {
      new Logger('Shutdown').error({ signal, limitMs }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, limitMs).unref();
  };
  for (const s of signals) process.once(s, onSignal);
}
