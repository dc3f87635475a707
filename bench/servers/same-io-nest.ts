// The same-I/O routes as one bare Nest controller, served on Express by baseline C (baseline-io.ts) and on Fastify
// by baseline-nest-fastify.ts: the two differ only in the platform adapter.
import { Body, Controller, Get, HttpCode, Module, Param, Post, Query } from '@nestjs/common';
import { acceptMessage, getPet, listPets } from './same-io';

@Controller()
class SameIoController {
  @Get('pets/:id')
  getOne(@Param('id') id: string): Promise<object> {
    return getPet(id);
  }

  @Get('pets')
  list(@Query('limit') limit?: string): Promise<object[]> {
    return listPets(Number(limit ?? 20));
  }

  @Post('messages')
  @HttpCode(202)
  accept(@Body() body: { message: string }): Promise<object> {
    return acceptMessage(body.message);
  }

  @Get('ready')
  ready(): object {
    return { ok: true };
  }
}

@Module({ controllers: [SameIoController] })
export class SameIoModule {}
