import type { FastifyReply } from 'fastify';
import { IdempotencyService } from './idempotency.service';
import { IdempotencyStore } from './idempotency.store';

describe('IdempotencyService', () => {
  it("answers a request without Idempotency-Key with the work's own promise", () => {
    const service = new IdempotencyService({} as IdempotencyStore);
    const res = { request: { headers: {}, auth: { accountId: 1 } } } as unknown as FastifyReply;
    const answer = Promise.resolve('done');
    expect(service.run(res, () => answer)).toBe(answer);
  });
});
