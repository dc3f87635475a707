import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A job that must reach BullMQ, written in the same transaction as the change that needs it.
 * The API enqueues it right after commit and deletes the row; the worker's relay enqueues any
 * row left behind (Redis down, process killed), so a committed change never loses its job.
 */
@Entity('outbox')
export class OutboxEntry {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('text')
  queue!: string;

  @Column('text', { name: 'job_name' })
  jobName!: string;

  /** Deterministic BullMQ job id, so enqueueing twice is harmless. */
  @Column('text', { name: 'job_id' })
  jobId!: string;

  @Column('jsonb')
  payload!: unknown;

  /** Fulfilment jobs wait for their ship date. */
  @Column('timestamptz', { name: 'run_at', nullable: true })
  runAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
