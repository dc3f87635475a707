import { Column, Entity, Index } from 'typeorm';
import { IdentityKey, Timestamp } from '@app/database';

/** A job staged inside a unit of work, enqueued after commit (or by the relay, if that enqueue was lost). */
@Entity('outbox')
@Index('outbox_created_at', ['createdAt', 'id'])
export class OutboxEntity {
  @IdentityKey('outbox')
  id!: number;

  @Column('text')
  queue!: string;

  @Column('text', { name: 'job_name' })
  jobName!: string;

  @Column('text', { name: 'job_id' })
  jobId!: string;

  @Column('jsonb')
  payload!: object;

  @Column('timestamptz', { name: 'run_at', nullable: true })
  runAt!: Date | null;

  @Timestamp('created_at')
  createdAt!: Date;

  @Column('text', { nullable: true })
  traceparent!: string | null;
}
