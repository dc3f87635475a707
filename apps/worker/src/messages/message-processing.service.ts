import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Message, toMessageView } from '@app/database';
import { describe } from '@app/errors';
import { TransactionService } from '@app/outbox';

/** Messages beginning with this are rejected on every attempt: a way to see the failed path end to end. */
export const POISON_PREFIX = 'poison:';

export class MessageRejectedError extends Error {}

/**
 * The work done for a message, a stand-in for real work: deterministic, observable in the
 * answer of GET /messages/{id}. Throws MessageRejectedError for a poison message.
 */
export function processText(text: string): { characters: number; sha256: string } {
  if (text.startsWith(POISON_PREFIX)) {
    throw new MessageRejectedError(`rejected by the processor: the message begins with "${POISON_PREFIX}"`);
  }
  return { characters: [...text].length, sha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}

/**
 * Moves a message queued → processing → processed, or → failed once its attempts are spent.
 * Every transition is a conditional UPDATE, so a job that runs twice (relay re-enqueue, a
 * worker killed after committing, a lost lock) processes the message once.
 */
@Injectable()
export class MessageProcessingService {
  private readonly logger = new Logger(MessageProcessingService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly tx: TransactionService,
  ) {}

  /** Throws when this attempt failed, so that BullMQ retries it (with backoff) or records the failure. */
  async process(messageId: string, finalAttempt: boolean): Promise<void> {
    const message = await this.claim(messageId);
    if (!message) return;
    let result: ReturnType<typeof processText>;
    try {
      result = processText(message.message);
    } catch (err) {
      await this.recordFailure(message.id, err, finalAttempt);
      throw err;
    }
    await this.tx.run(async (tx) => {
      const { affected } = await tx.manager
        .createQueryBuilder()
        .update(Message)
        .set({ status: 'processed', ...result, processedAt: () => 'now()', lastError: null })
        .where('id = :id AND status = :status', { id: message.id, status: 'processing' })
        .execute();
      if (!affected) return;
      const processed = await tx.manager.findOneByOrFail(Message, { id: message.id });
      await tx.emit({
        accountId: processed.accountId,
        type: 'message.processed',
        resourceType: 'message',
        resourceId: processed.id,
        data: toMessageView(processed),
      });
    });
  }

  /**
   * queued → processing, or processing → processing when an earlier run died before finishing.
   * Null when the message is already processed or failed (or gone): nothing left to do.
   */
  private async claim(id: string): Promise<Message | null> {
    const { affected } = await this.dataSource
      .createQueryBuilder()
      .update(Message)
      .set({ status: 'processing', attempts: () => 'attempts + 1' })
      .where('id = :id AND status IN (:...open)', { id, open: ['queued', 'processing'] })
      .execute();
    return affected ? this.dataSource.getRepository(Message).findOneBy({ id }) : null;
  }

  /** Back to queued until the retry, or failed (with its reason and event) after the last attempt. */
  private async recordFailure(id: string, err: unknown, final: boolean): Promise<void> {
    // Only our own rejections are worded for API users; anything else stays in the log.
    const reason = err instanceof MessageRejectedError ? err.message : 'processing failed (internal error)';
    if (!(err instanceof MessageRejectedError))
      this.logger.error({ err: describe(err), id }, 'message processing failed');
    await this.tx.run(async (tx) => {
      const { affected } = await tx.manager
        .createQueryBuilder()
        .update(Message)
        .set(
          final
            ? { status: 'failed', lastError: reason, failedAt: () => 'now()' }
            : { status: 'queued', lastError: reason },
        )
        .where('id = :id AND status = :status', { id, status: 'processing' })
        .execute();
      if (!affected || !final) return;
      const failed = await tx.manager.findOneByOrFail(Message, { id });
      await tx.emit({
        accountId: failed.accountId,
        type: 'message.failed',
        resourceType: 'message',
        resourceId: failed.id,
        data: toMessageView(failed),
      });
    });
  }
}
