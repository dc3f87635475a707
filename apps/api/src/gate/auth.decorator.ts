import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthContext } from '@app/access';

// The request gate guarantees it on every /v1 route.
export const authOf = (reply: FastifyReply): AuthContext => reply.request.auth!;

export const Auth = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthContext => ctx.switchToHttp().getRequest<FastifyRequest>().auth!,
);
