import { ApiError } from '@app/errors';
import { Readiness, ReadinessService, unreachable } from '@app/lifecycle';

// Needs Postgres only: nearly every route does. Redis down is `degraded`, still 200: the API serves
// without it, and a 503 would take every pod out at once.
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
