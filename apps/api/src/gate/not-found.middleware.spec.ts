import { NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { mountsOutside, notFoundOutside } from './not-found.middleware';

const step = notFoundOutside('v1', ['/', '/health/live'], ['/openapi.json', '/v1/openapi.json', '/docs']);
const handed = (path: string): unknown => {
  let err: unknown = 'not called';
  step({ path } as Request, {} as Response, (e?: unknown) => (err = e));
  return err;
};

describe('notFoundOutside', () => {
  it('lets through what lies below the prefix, in any case', () => {
    for (const path of ['/v1', '/v1/', '/V1/nope', '/v1//x']) expect(handed(path)).toBeUndefined();
  });

  it('lets through what lies below a mount, for the mount to serve or refuse', () => {
    for (const path of ['/docs', '/docs/', '/DOCS/x.css', '/openapi.json', '/openapi.json/x'])
      expect(handed(path)).toBeUndefined();
  });

  it('lets through an unprefixed route, in any case and with a trailing slash', () => {
    for (const path of ['/', '/health/live', '/Health/Live/']) expect(handed(path)).toBeUndefined();
  });

  it('refuses any other path with 404', () => {
    for (const path of ['/nope', '/v1x', '/docsx', '/health', '/health/live/x', '/%64ocs'])
      expect(handed(path)).toBeInstanceOf(NotFoundException);
  });
});

describe('mountsOutside', () => {
  it('leaves out the mounts below the prefix, which Nest answers', () => {
    expect(mountsOutside('v1', ['/openapi.json', '/v1/openapi.json', '/docs'])).toEqual(['/openapi.json', '/docs']);
  });
});
