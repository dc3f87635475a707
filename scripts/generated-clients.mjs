// `npm run openapi:clients`: clients generated from openapi.json by two popular generators
// (@hey-api/openapi-ts and orval, fetch clients) must compile under strict tsc. A document that
// generators choke on (duplicate parameters, invalid names) breaks consumers even when it lints.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'petstore-clients-'));
const bin = (name) => join('node_modules', '.bin', name);
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
try {
  run(bin('openapi-ts'), ['-i', 'openapi.json', '-o', join(dir, 'hey-api'), '-c', '@hey-api/client-fetch']);
  run(bin('orval'), ['--input', 'openapi.json', '--output', join(dir, 'orval', 'api.ts'), '--client', 'fetch']);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        skipLibCheck: true,
        types: [],
      },
      include: ['hey-api/**/*.ts', 'orval/**/*.ts'],
    }),
  );
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', join(dir, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  process.stdout.write('clients from @hey-api/openapi-ts and orval compile\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
