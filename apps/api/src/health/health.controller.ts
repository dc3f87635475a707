import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Readiness, ReadinessService } from '@app/lifecycle';
import { PublicGet } from '../policy/route-policy.decorator';
import { apiReadiness } from './api-readiness';

// Also on METRICS_PORT, for the kubelet.
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @PublicGet('health/live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @PublicGet('health/ready')
  ready(): Promise<Omit<Readiness, 'ready'>> {
    return apiReadiness(this.readiness);
  }
}
