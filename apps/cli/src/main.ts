import { Console } from 'node:console';
import { runCli } from './cli-runner';

// stdout carries only a command's output (`--json | jq`): whatever a library prints goes to stderr.
globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });

const stop = new AbortController();
void runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  // Handed whole to runCli, whose commands read their configuration from it through loadConfig.
  // eslint-disable-next-line no-restricted-properties
  env: process.env,
  envFile: '.env',
  // Read by `listen` alone, as it starts: Ctrl-C ends its stream (exit 0) and kills any other command at once.
  get signal() {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
    return stop.signal;
  },
}).then((code) => {
  process.exitCode = code;
  // A failed command may leave a client retrying (Redis down): its error is printed, the process ends.
  if (code !== 0) process.exit();
});
