import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let version: string | undefined;

/**
 * The version in the nearest package.json upwards: the repository's, from libs/observability/src and
 * dist/libs/observability/src, in a checkout and in the image alike.
 */
export function packageVersion(): string {
  if (version === undefined) {
    let dir = __dirname;
    while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
    version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  }
  return version;
}
