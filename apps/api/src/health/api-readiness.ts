import { ApiError } from '@app/errors';
import { Readiness, ReadinessService, unreachable } from '@app/observability';

/**
 * Ready while Postgres answers: nearly every route needs it, so a pod without it leaves the
 * Service and a rollout waits. Redis down is `degraded`, still 200: the API serves without it
 * (per-process limiter, cached keys), and a 503 would take every pod out at once. From a check at
 * most 1 s old, shared by concurrent probes. Served on PORT and on METRICS_PORT alike.
 */
export async function apiReadiness(readiness: ReadinessService): Promise<Omit<Readiness, 'ready'>> {
  const r = await readiness.recentCheck(['postgres']);
  if (!r.ready) {
    const down = unreachable(r);
    throw new ApiError('service_unavailable', `Not ready: ${down.map((d) => d.field).join(', ')} unreachable`, down, {
      'Retry-After': '5',
    });
  }
  return { status: r.status, checks: r.checks };
}
