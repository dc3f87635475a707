import { createHash } from 'node:crypto';
import { Command } from 'ioredis';
import type { RedisClient } from './redis';

/** One RESP bulk string (`$<bytes>\r\n<text>\r\n`), as ioredis writes each argument. */
export const bulk = (text: string): string => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

const isNoScript = (err: unknown) => err instanceof Error && err.message.includes('NOSCRIPT');

// ioredis builds a command's text from its arguments on every call (five strings an argument, the limiter's
// largest allocation per request): this one writes the text its caller put together from bulk strings made once.
// encoded-script.spec.ts fails if ioredis writes other text for the same arguments.
class EncodedCommand extends Command {
  constructor(
    name: 'evalsha' | 'eval',
    args: (string | number)[],
    private readonly head: string,
    private readonly body: string,
  ) {
    super(name, args);
  }

  override toWritable(): string {
    return `*${this.args.length + 1}\r\n${this.head}${this.body}`;
  }
}

/**
 * A Lua script sent as EVALSHA with arguments encoded by the caller (EVAL when Redis lost the script). The command's
 * `args` still carry every argument: a cluster routes by their keys, and debug logs show them.
 */
export class EncodedScript {
  private readonly sha: string;
  private readonly shaHead: string;
  private readonly evalHead: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
    this.shaHead = bulk('evalsha') + bulk(this.sha);
    this.evalHead = bulk('eval') + bulk(lua);
  }

  /**
   * `args`: what EVALSHA takes after the sha (key count, keys, arguments), behind one free slot at index 0; `body`:
   * the same after the slot, each as `bulk` gives it, in order.
   */
  run(client: RedisClient, args: (string | number)[], body: string): Promise<unknown> {
    args[0] = this.sha;
    const sent = client.sendCommand(new EncodedCommand('evalsha', args, this.shaHead, body)) as Promise<unknown>;
    return sent.catch((err: unknown) => {
      if (!isNoScript(err)) throw err;
      const again = args.slice();
      again[0] = this.lua;
      return client.sendCommand(new EncodedCommand('eval', again, this.evalHead, body));
    });
  }
}
