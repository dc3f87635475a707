import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WorkerFeature } from '@app/jobs';
import { WORKER_FEATURES } from './worker.module';

const isWorkerFeature = (value: unknown): value is WorkerFeature =>
  typeof value === 'object' &&
  value !== null &&
  ['jobs', 'sweeps', 'retention'].every((list) => Array.isArray((value as Record<string, unknown>)[list]));

it('names every worker list a library exports (a list left out would never run)', () => {
  const exported = readdirSync(join(__dirname, '../../../libs')).flatMap((lib) =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- each library's public surface, by its name
    Object.entries(require(`@app/${lib}`) as Record<string, unknown>).filter(([, value]) => isWorkerFeature(value)),
  );
  expect(exported.filter(([, list]) => !WORKER_FEATURES.includes(list as WorkerFeature)).map(([name]) => name)).toEqual(
    [],
  );
  expect(exported.length).toBeGreaterThan(1);
});
