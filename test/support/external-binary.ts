import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `binary` (an absolute path, or a name looked up on PATH) can be run. */
function installed(binary: string): boolean {
  const candidates = binary.includes('/')
    ? [binary]
    : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, binary));
  return candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * `describe` for a suite that needs a program outside npm. Without it a local run skips the
 * suite with one line naming the program and its install command; CI (`CI=true`) runs the
 * suite anyway, so a missing program fails there instead of passing unseen.
 */
export function describeWith(binary: string, install: string): jest.Describe {
  if (installed(binary) || process.env.CI === 'true') return describe;
  process.stderr.write(`skipped: needs ${binary} (${install})\n`);
  return describe.skip;
}

export const describeWithChromium = describeWith('/usr/bin/chromium', 'apt-get install -y chromium');
