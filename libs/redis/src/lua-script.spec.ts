import { createHash } from 'node:crypto';
import { Command } from 'ioredis';
import type { RedisClient } from './redis';
import { LuaScript } from './lua-script';

const LUA = 'return #KEYS';
const SHA = createHash('sha1').update(LUA).digest('hex');
const ARGS = [2, 'rl:{a:1}:m:60000', 'rl:{a:1}:usage', '100', '', 'consume', '1700000000123', 'é'];

/** A client that records the commands it is given and answers each with `answer`. */
function recording(answer: (command: Command) => Promise<unknown>) {
  const sent: Command[] = [];
  const client = {
    sendCommand: (command: Command) => (sent.push(command), answer(command)),
  } as unknown as RedisClient;
  return { client, sent };
}

describe('LuaScript', () => {
  it('sends EVALSHA with the sha and the arguments', async () => {
    const { client, sent } = recording(async () => 2);
    await new LuaScript(LUA).run(client, ['', ...ARGS]);
    expect(sent[0].name).toBe('evalsha');
    expect(sent[0].args).toEqual([SHA, ...ARGS.map(String)]);
  });

  it('routes by its arguments: the command holds every key, as a cluster reads them', async () => {
    const { client, sent } = recording(async () => 2);
    await new LuaScript(LUA).run(client, ['', ...ARGS]);
    expect(sent[0].getKeys()).toEqual(['rl:{a:1}:m:60000', 'rl:{a:1}:usage']);
  });

  it('sends the script as EVAL, with the same arguments, when Redis answers NOSCRIPT', async () => {
    const { client, sent } = recording(async (command) => {
      if (command.name === 'evalsha') throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      return 2;
    });
    const answer = await new LuaScript(LUA).run(client, ['', ...ARGS]);
    expect(answer).toBe(2);
    expect(sent.map((c) => c.name)).toEqual(['evalsha', 'eval']);
    expect(sent[1].args).toEqual([LUA, ...ARGS.map(String)]);
  });

  it('rejects with any other error as it came', async () => {
    const { client, sent } = recording(async () => {
      throw new Error('Connection is closed.');
    });
    await expect(new LuaScript(LUA).run(client, ['', ...ARGS])).rejects.toThrow('Connection is closed.');
    expect(sent).toHaveLength(1);
  });
});
