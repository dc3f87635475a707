/** The benches' command line after the script name. */
export const argv = process.argv.slice(2);

/** `--name value`, or `fallback` when the flag or its value is missing. */
export function option(name: string, fallback: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
}
