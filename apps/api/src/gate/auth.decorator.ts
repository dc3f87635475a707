import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AuthContext } from '@app/auth';

/** The authenticated caller; the request gate guarantees it on every /v1 route. */
export const Auth = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthContext => {
  const req = ctx.switchToHttp().getRequest<Request>();
  return req.auth as AuthContext;
});
