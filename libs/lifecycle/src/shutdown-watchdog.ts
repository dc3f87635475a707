import { Logger } from '@nestjs/common';

// Closing pools and clients gets this long after SHUTDOWN_GRACE_MS of in-flight work.
export const CLOSE_BUDGET_MS = 2_000;

// Arm it where the process installs its own signal handlers: a listener on these signals
// replaces Node's default of exiting at once.
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
