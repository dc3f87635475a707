import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';
import { AuthContext } from '@app/access';

// The request gate guarantees it on every /v1 route.
export const authOf = (res: Response): AuthContext => res.locals.auth as AuthContext;

export const Auth = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthContext => authOf(ctx.switchToHttp().getResponse<Response>()),
);
