import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { ACCOUNT_COMMANDS } from './account.commands';
import { CliIo, Command, UsageError, Values } from './cli-command';
import { DEVELOPER_COMMANDS } from './developer.commands';
import { KEY_COMMANDS } from './key.commands';
import { UPGRADE_COMMANDS } from './upgrade.commands';

export type { CliIo } from './cli-command';

// In the order --help lists them.
const COMMANDS: Record<string, Command> = {
  ...ACCOUNT_COMMANDS,
  ...KEY_COMMANDS,
  ...UPGRADE_COMMANDS,
  ...DEVELOPER_COMMANDS,
};

const NAME_WIDTH = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
const USAGE = [
  'Usage: npx petstore <command> [options]     (<command> --help for its options; --version)',
  ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(NAME_WIDTH)}  ${c.summary}`),
].join('\n');

const commandHelp = (name: string, c: Command) => `Usage: npx petstore ${name} ${c.synopsis}\n  ${c.summary}`;

// The nearest package.json upwards: the repository's, from dist/apps/cli/src and apps/cli/src, in a checkout and in the image alike.
function packageVersion(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The exit code. */
async function run(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(`unknown command '${name}'\n${USAGE}`);
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    // Node then suggests '--' for positionals: only the first part is useful here.
    const message = (err as Error).message.split('. ')[0].replace(/^Unknown option/, 'unknown option');
    throw new UsageError(`${name}: ${message}\n${commandHelp(name, command)}`);
  }
  if (values.help) {
    io.stdout.write(`${commandHelp(name, command)}\n`);
    return 0;
  }
  const allowed = command.positionals ?? 0;
  if (positionals.length > allowed)
    throw new UsageError(`${name}: unexpected argument '${positionals[allowed]}'\n${commandHelp(name, command)}`);
  try {
    await command.run(values, positionals, io);
  } catch (err) {
    if (err instanceof UsageError) err.message = `${name}: ${err.message}\n${commandHelp(name, command)}`;
    throw err;
  }
  return 0;
}

/**
 * One invocation of the CLI (`argv` without node and the script): what it prints goes to `io`, the exit code is
 * returned (2 for a usage error, 1 for a refused or failed command); it never exits the process.
 */
export function runCli(argv: string[], io: CliIo): Promise<number> {
  return run(argv, io).catch((err: Error) => {
    io.stderr.write(`error: ${err.message}\n`);
    return err instanceof UsageError ? 2 : 1;
  });
}
