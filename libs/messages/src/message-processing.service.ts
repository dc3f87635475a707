import { hash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { describe } from '@app/errors';
import { UnitOfWork } from '@app/transactions';
import { JobBatcher, JobPayload, JobRun, OnJob } from '@app/jobs';
import { currentTraceparent, runInTrace } from '@app/observability';
import { MessageQueue, ProcessMessageJob, ProcessMessagesJob } from './message.jobs';
import { ClaimedMessage, Message, messageQueries, ProcessedMessage } from './messages.queries';
import { toMessageView } from './views';

/** How long the first job of a batch waits for others: well under the lag budget, a few Redis round trips. */
const BATCH_WAIT_MS = 5;

/** A message's own span, named as its job's was before messages were processed in batches. */
const MESSAGE_SPAN = `${MessageQueue.name} ${ProcessMessageJob.name}`;
const MESSAGE_SPAN_ATTRIBUTES = {
  'messaging.destination.name': MessageQueue.name,
  'messaging.operation.name': ProcessMessageJob.name,
};

/** Messages beginning with this are rejected on every attempt: a way to see the failed path end to end. */
export const POISON_PREFIX = 'poison:';

export class MessageRejectedError extends Error {}

export interface MessageJob {
  accountId: number;
  messageId: string;
  finalAttempt: boolean;
  /** The trace the job runs in: its message.processed event continues it. */
  traceparent?: string | null;
}

/** A stand-in for real work: deterministic, and observable in the answer of GET /messages/{id}. */
export function processText(text: string): { characters: number; sha256: string } {
  if (text.startsWith(POISON_PREFIX)) {
    throw new MessageRejectedError(`rejected by the processor: the message begins with "${POISON_PREFIX}"`);
  }
  return { characters: [...text].length, sha256: hash('sha256', text, 'hex') };
}

// Every transition is a conditional UPDATE, so a job that runs twice (relay re-enqueue, a worker killed after
// committing, a lost lock, the same message twice in one batch) processes the message once.
@Injectable()
export class MessageProcessingService {
  private readonly logger = new Logger(MessageProcessingService.name);
  private readonly batcher: JobBatcher<MessageJob, undefined>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
    config: AppConfig,
  ) {
    this.batcher = new JobBatcher((jobs) => this.processBatch(jobs), config.jobs.batchSize, BATCH_WAIT_MS);
  }

  /**
   * The job fails with the first of its messages' errors once all are settled; its retry claims only the messages
   * still open, so each message is attempted as often as if it had a job of its own.
   */
  @OnJob(ProcessMessagesJob)
  async processMessages(payload: JobPayload<typeof ProcessMessagesJob>, run: JobRun): Promise<void> {
    // As a job of its own would run it: under a consumer span continuing the message's trace.
    const outcomes = await Promise.allSettled(
      payload.messages.map((m) =>
        runInTrace(m.traceparent, MESSAGE_SPAN, 'consumer', MESSAGE_SPAN_ATTRIBUTES, () =>
          this.submit(m.accountId, m.id, run.finalAttempt, currentTraceparent() ?? null),
        ),
      ),
    );
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  @OnJob(ProcessMessageJob)
  async process(payload: JobPayload<typeof ProcessMessageJob>, run: JobRun): Promise<void> {
    await this.submit(payload.accountId, payload.messageId, run.finalAttempt, run.traceparent);
  }

  private submit(accountId: number, messageId: string, finalAttempt: boolean, traceparent: string | null) {
    return this.batcher.submit({ accountId, messageId, finalAttempt, traceparent });
  }

  // One UPDATE claims the batch, one transaction finishes it. Per job: undefined when done (or nothing was left to
  // do), else the error, which BullMQ retries or records.
  async processBatch(jobs: MessageJob[]): Promise<(Error | undefined)[]> {
    const accountOf = new Map(jobs.map((j) => [j.messageId, j.accountId]));
    const ids = [...accountOf.keys()].sort();
    const accountIds = ids.map((id) => accountOf.get(id)!);
    const claimed = await preparedQuery<ClaimedMessage>(this.dataSource, messageQueries.claim(accountIds, ids));
    const done: ProcessedMessage[] = [];
    const errors = new Map<string, Error>();
    for (const m of claimed) {
      try {
        done.push({ accountId: m.accountId, id: m.id, ...processText(m.message) });
      } catch (err) {
        errors.set(m.id, err as Error);
      }
    }
    if (done.length) {
      const traceparents = new Map(jobs.map((j) => [j.messageId, j.traceparent]));
      await this.uow.run(async (tx) => {
        const processed = await preparedQuery<Message>(tx.manager, messageQueries.finish(done));
        await tx.emitMany(
          processed.map((m) => ({
            accountId: m.accountId,
            type: 'message.processed' as const,
            resourceType: 'message',
            resourceId: m.id,
            data: toMessageView(m),
            traceparent: traceparents.get(m.id),
          })),
        );
      });
    }
    // The rare failed attempts, one by one.
    for (const [id, err] of errors) {
      const final = jobs.some((j) => j.messageId === id && j.finalAttempt);
      await this.recordFailure(accountOf.get(id)!, id, err, final);
    }
    return jobs.map((j) => errors.get(j.messageId));
  }

  /** Back to queued until the retry, or failed (with its reason and event) after the last attempt. */
  private async recordFailure(accountId: number, id: string, err: unknown, final: boolean): Promise<void> {
    // Only our own rejections are worded for API users; anything else stays in the log.
    const reason = err instanceof MessageRejectedError ? err.message : 'processing failed (internal error)';
    if (!(err instanceof MessageRejectedError))
      this.logger.error({ err: describe(err), id }, 'message processing failed');
    await this.uow.run(async (tx) => {
      const [failed] = await preparedQuery<Message>(
        tx.manager,
        messageQueries.recordFailure(accountId, id, final ? 'failed' : 'queued', reason),
      );
      if (!failed || !final) return;
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
