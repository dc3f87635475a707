import { Controller, Get, Post, RequestMethod } from '@nestjs/common';
import { controllerPaths, handlerRoute } from './route-metadata';

@Controller(['things', 'stuff'])
class ThingsController {
  @Get(':thingId')
  get(): void {}

  @Post()
  create(): void {}

  helper(): void {}
}

describe('route metadata', () => {
  it("reads a controller's paths as @Controller recorded them", () => {
    expect(controllerPaths(ThingsController)).toEqual(['things', 'stuff']);
  });

  it("reads a handler's method and path as @Get recorded them", () => {
    expect(handlerRoute(ThingsController.prototype.get)).toEqual({ method: RequestMethod.GET, paths: [':thingId'] });
  });

  it('reads a handler without a path as the controller root', () => {
    expect(handlerRoute(ThingsController.prototype.create)).toEqual({ method: RequestMethod.POST, paths: ['/'] });
  });

  it('finds no route on a plain method', () => {
    expect(handlerRoute(ThingsController.prototype.helper)).toBeUndefined();
  });
});
