import { createHash } from 'node:crypto';
import { Command } from 'ioredis';
import type { RedisClient } from './redis';

const isNoScript = (err: unknown) => err instanceof Error && err.message.includes('NOSCRIPT');

/**
 * A Lua script sent as EVALSHA through `sendCommand`, so it is written at once and never auto-pipelined (EVAL when
 * Redis lost the script).
 */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** `args`: what EVALSHA takes after the sha (key count, keys, arguments), behind one free slot at index 0. */
  run(client: RedisClient, args: (string | number)[]): Promise<unknown> {
    args[0] = this.sha;
    const sent = client.sendCommand(new Command('evalsha', args)) as Promise<unknown>;
    return sent.catch((err: unknown) => {
      if (!isNoScript(err)) throw err;
      const again = args.slice();
      again[0] = this.lua;
      return client.sendCommand(new Command('eval', again));
    });
  }
}
