import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ApiError } from '@app/errors';
import { Readiness, ReadinessService, unreachable } from '@app/observability';
import { PublicGet } from '../gate/public-routes';

/** Operations endpoints: no API key, no rate limit, outside /v1. */
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @PublicGet('health/live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready while Postgres answers: nearly every route needs it, so a pod without it leaves the
   * Service and a rollout waits. Redis down is `degraded`, still 200: the API serves without it
   * (per-process limiter, cached keys), and a 503 would take every pod out at once.
   */
  @PublicGet('health/ready')
  async ready(): Promise<Omit<Readiness, 'ready'>> {
    const r = await this.readiness.check(['postgres']);
    if (!r.ready) {
      const down = unreachable(r);
      throw new ApiError('service_unavailable', `Not ready: ${down.map((d) => d.field).join(', ')} unreachable`, down, {
        'Retry-After': '5',
      });
    }
    return { status: r.status, checks: r.checks };
  }
}
