import { Controller, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import accepts from 'accepts';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
  links(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    reply.header('Vary', 'Accept');
    if (accepts(req.raw).type(['application/json', 'text/html']) === 'text/html')
      void reply.redirect(ROOT_LINKS.links.docs, 302);
    else void reply.send(ROOT_LINKS);
  }
}
