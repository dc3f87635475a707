import { metricsText } from './http-metrics';

/** The metric names of a Prometheus text exposition (from its TYPE lines). */
const names = (text: string) => [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);

// Node's and the process's default metrics keep prom-client's standard names, the ones stock Node.js
// dashboards and alerts query; only the metrics this service defines carry `petstore_`.
describe('default metrics (API and worker alike: one registry)', () => {
  it('are exposed under their standard names', async () => {
    const exposed = names((await metricsText()).body);
    expect(exposed).toEqual(
      expect.arrayContaining([
        'process_cpu_seconds_total',
        'process_start_time_seconds',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
        'nodejs_gc_duration_seconds',
        'nodejs_version_info',
      ]),
    );
  });

  it('are not exposed a second time under petstore_ (only our own petstore_nodejs_heap_after_full_gc_bytes is)', async () => {
    const exposed = names((await metricsText()).body);
    expect(exposed.filter((name) => /^petstore_(process|nodejs)_/.test(name))).toEqual([
      'petstore_nodejs_heap_after_full_gc_bytes',
    ]);
  });
});
