import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { MessagesController } from './messages.controller';

describe('MessagesController.create', () => {
  // Nest settles every parameter a pipe may see (body, custom decorators) through promises of its own per request.
  it('takes only the response from Nest: no parameter a pipe sees', () => {
    const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, MessagesController, 'create') as Record<string, unknown>;
    expect(Object.keys(args).map((key) => Number(key.split(':')[0]))).toEqual([RouteParamtypes.RESPONSE]);
  });
});
