import { Controller } from '@nestjs/common';
import { PublicGet } from '../policy/route-policy.decorator';
import { PublicPaths, publicRoutesOf } from './public-routes';

@Controller()
class ProbeController {
  @PublicGet('health/live')
  live(): string {
    return 'ok';
  }

  notPublic(): string {
    return 'no';
  }
}

describe('public routes', () => {
  const paths = new PublicPaths(publicRoutesOf([ProbeController]), ['/docs'], ['/openapi.json']);

  it('finds the paths of the routes marked @PublicGet, and only those', () => {
    expect(publicRoutesOf([ProbeController])).toEqual(['/health/live']);
  });

  it('lets a marked route through with or without a trailing slash', () => {
    expect(paths.has('/health/live')).toBe(true);
    expect(paths.has('/health/live/')).toBe(true);
  });

  it('lets a mount and what lies below it through, not a longer name', () => {
    expect(paths.has('/docs')).toBe(true);
    expect(paths.has('/docs/swagger-ui.css')).toBe(true);
    expect(paths.has('/docsx')).toBe(false);
  });

  it('lets a served file through with or without a trailing slash, not what lies below it', () => {
    expect(paths.has('/openapi.json')).toBe(true);
    expect(paths.has('/openapi.json/')).toBe(true);
    expect(paths.has('/openapi.json/x')).toBe(false);
  });

  it('gates every other path', () => {
    for (const path of ['/v1/pets', '/health', '/health/live/x', '/HEALTH/LIVE', '/', '/openapi.jsonx'])
      expect(paths.has(path)).toBe(false);
  });
});
