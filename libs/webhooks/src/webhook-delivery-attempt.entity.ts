import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';

const PKEY = 'webhook_delivery_attempts_pkey';

/** One attempt of a delivery; no foreign key to the time-partitioned deliveries, retention pairs them. */
@Entity('webhook_delivery_attempts')
@Check('webhook_delivery_attempts_attempt_check', 'attempt > 0')
@Check('webhook_delivery_attempts_duration_ms_check', 'duration_ms >= 0')
@Index('webhook_delivery_attempts_age', ['attemptedAt'])
export class WebhookDeliveryAttemptEntity {
  @PrimaryColumn('bigint', { name: 'account_id', primaryKeyConstraintName: PKEY })
  @ForeignKey('accounts', { name: 'webhook_delivery_attempts_account_id_fkey', onDelete: 'CASCADE' })
  accountId!: number;

  @PrimaryColumn('bigint', { name: 'delivery_id', primaryKeyConstraintName: PKEY })
  deliveryId!: number;

  @PrimaryColumn('integer', { primaryKeyConstraintName: PKEY })
  attempt!: number;

  @Column('timestamptz', { name: 'attempted_at' })
  attemptedAt!: Date;

  @Column('integer', { name: 'status_code', nullable: true })
  statusCode!: number | null;

  @Column('integer', { name: 'duration_ms' })
  durationMs!: number;

  @Column('text', { name: 'response_excerpt', nullable: true })
  responseExcerpt!: string | null;

  @Column('text', { nullable: true })
  error!: string | null;
}
