// Baseline B: a bare NestJS Express app with one route answering the same body.
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { FIXED_BODY } from './fixed-body';

@Controller()
class FixedController {
  @Get('fixed')
  fixed(): object {
    return FIXED_BODY;
  }

  // The POST counterpart: a JSON body parsed and answered 202, as POST /v1/messages is.
  @Post('fixed')
  @HttpCode(202)
  accept(@Body() body: object): object {
    return { ...FIXED_BODY, received: Object.keys(body).length };
  }
}

@Module({ controllers: [FixedController] })
class BaselineModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(BaselineModule, { logger: ['error'] });
  app.enableShutdownHooks();
  const server = await app.listen(Number(process.env.PORT));
  server.keepAliveTimeout = 5_000;
}

void main();
