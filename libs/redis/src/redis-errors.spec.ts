import { ReplyError } from 'ioredis';
import { redisErrorKind } from './redis-errors';

describe('redisErrorKind', () => {
  it.each([
    ["CROSSSLOT Keys in request don't hash to the same slot", 'crossslot'],
    ['MOVED 3999 127.0.0.1:6381', 'redirection'],
    ['Too many Cluster redirections. Last error: ReplyError: MOVED 1 127.0.0.1:1', 'redirection'],
    ['CLUSTERDOWN The cluster is down', 'cluster_down'],
    ['connect ECONNREFUSED 127.0.0.1:6379', 'connection'],
    ['Command timed out', 'connection'],
    ['WRONGTYPE Operation against a key holding the wrong kind of value', 'other'],
  ])('%s is %s', (message, kind) => {
    expect(redisErrorKind(new ReplyError(message))).toBe(kind);
  });
});
