import type { FastifyReply } from 'fastify';
import type { IdempotencyService } from '../idempotency/idempotency.service';

/** A creating POST: done once per Idempotency-Key, answered with the new record's `Location`. */
export function created<T extends { id: number }>(
  idempotency: IdempotencyService,
  res: FastifyReply,
  collection: string,
  work: () => Promise<T>,
): Promise<T> {
  return idempotency.run(res, async () => {
    const record = await work();
    res.header('Location', `${collection}/${record.id}`);
    return record;
  });
}
