import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES, loadConfig } from '@app/config';

/**
 * Every variable libs/config/src/config.ts reads is documented where people look: the README's
 * configuration table, and .env.example at its default (copied to .env, it changes nothing).
 */
const root = join(__dirname, '..');
const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

describe('configuration docs', () => {
  it('the README configuration table names every variable config.ts reads, and no other', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = /^## Configuration\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1] ?? '';
    const named = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...line.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]));
    expect(sorted(named)).toEqual(sorted(CONFIG_VARIABLES));
  });

  it('.env.example lists every variable config.ts reads, each at its default', () => {
    const entries = [...readFileSync(join(root, '.env.example'), 'utf8').matchAll(/^# ?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(
      ([, name, value]) => [name, value.replace(/^"(.*)"$/, '$1')] as const,
    );
    expect(sorted(entries.map(([name]) => name))).toEqual(sorted(CONFIG_VARIABLES));
    const defaults = loadConfig({});
    for (const [name, value] of entries) expect([name, loadConfig({ [name]: value })]).toEqual([name, defaults]);
  });
});
