import { Test } from '@nestjs/testing';
import { AppConfig, ConfigModule, loadConfig } from '@app/config';
import { DatabaseModule } from '@app/database';
import { FEATURE_WORKERS } from '@app/features';
import { JobQueues, JobsModule } from '@app/jobs';
import { RedisModule } from '@app/redis';
import { eventually } from '../../support/http';
import { TcpProxy } from '../../support/tcp-proxy';

describe('queues: connections', () => {
  // A CI run once crashed the CLI this way: a command failed while BullMQ's Redis handshake
  // was in flight, and closing the queue turned the handshake's late failure into an uncaught
  // 'error' event.
  it('a producer closed during its Redis handshake lets the handshake finish, then shuts down cleanly', async () => {
    const redisUrl = loadConfig(process.env).redisUrl;
    const slowRedis = await TcpProxy.inFrontOf(redisUrl);
    slowRedis.replyDelayMs = 100;
    // Each connection's handshake ends with INFO (ioredis' ready check, then BullMQ's version check).
    let infos = 0;
    slowRedis.onClientData = (chunk) => (infos += chunk.toString().split('\r\ninfo\r\n').length - 1);
    try {
      const app = await Test.createTestingModule({
        imports: [
          ConfigModule,
          DatabaseModule.forRoot('api'),
          RedisModule,
          JobsModule.register('producer', FEATURE_WORKERS),
        ],
      })
        .overrideProvider(AppConfig)
        .useValue(loadConfig({ ...process.env, REDIS_URL: slowRedis.url }))
        .compile();
      await app.init();
      const queues = app.get(JobQueues).all();
      let settled = 0;
      const outcomes = queues.map((q) =>
        q
          .waitUntilReady()
          .then(
            () => 'ready',
            (err: Error) => err.message,
          )
          .finally(() => settled++),
      );
      await eventually(async () => infos >= queues.length, 5_000, 5);
      expect(settled).toBe(0); // every ready check is in flight when the close begins
      await app.close();
      expect(await Promise.all(outcomes)).toEqual(queues.map(() => 'ready'));
      // Any late failure would surface within the delayed replies still in flight.
      await new Promise((resolve) => setTimeout(resolve, 3 * slowRedis.replyDelayMs));
    } finally {
      await slowRedis.stop();
    }
  });
});
