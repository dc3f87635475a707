import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError } from '@app/errors';
import { metricsText, ReadinessService } from '@app/observability';

/** Operations endpoints: no API key, no rate limit, outside /v1. */
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get('health/live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('health/ready')
  async ready(): Promise<{ status: 'ok'; checks: Record<string, string> }> {
    const r = await this.readiness.check();
    if (!r.ready) {
      const down = Object.entries(r.checks).filter(([, s]) => s === 'down');
      throw new ApiError(
        'service_unavailable',
        `Not ready: ${down.map(([n]) => n).join(', ')} unreachable`,
        down.map(([field]) => ({ field, message: 'unreachable' })),
        { 'Retry-After': '5' },
      );
    }
    return { status: 'ok', checks: r.checks };
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metrics(@Res() res: Response): Promise<void> {
    const { contentType, body } = await metricsText();
    res.type(contentType).send(body);
  }
}
