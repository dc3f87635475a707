import { Controller, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { PublicGet } from '../policy/route-policy.decorator';

/** Where to go from `GET /`: the same for every deployment, so made once. */
export const ROOT_LINKS = {
  name: 'Pet Store API',
  links: { docs: '/docs', console: '/console', openapi: '/openapi.json', api: '/v1' },
} as const;

// The front door, without a key (a 401 there told a newcomer nothing). A browser goes on to the
// reference; anything else gets the links. Left out of the document, as the health routes are.
@ApiExcludeController()
@Controller()
export class RootController {
  @PublicGet('')
  links(@Req() req: Request, @Res() res: Response): void {
    res.setHeader('Vary', 'Accept');
    if (req.accepts(['application/json', 'text/html']) === 'text/html') res.redirect(302, ROOT_LINKS.links.docs);
    else res.json(ROOT_LINKS);
  }
}
