import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { IdentityKey, isIn, Timestamp } from '@app/database';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** eventId null: a test ping. Time-partitioned (SCHEMA_EXCEPTIONS): its keys and indexes are the migrations' alone. */
@Entity({ name: 'webhook_deliveries', synchronize: false })
@Check('webhook_deliveries_status_check', isIn('status', DELIVERY_STATUSES))
export class WebhookDeliveryEntity {
  /** The key leads with the account: (account_id, id). */
  @PrimaryColumn('bigint', { name: 'account_id', primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  accountId!: number;

  @IdentityKey('webhook_deliveries')
  id!: number;

  @Column('bigint', { name: 'webhook_id' })
  webhookId!: number;

  @Column('bigint', { name: 'event_id', nullable: true })
  eventId!: number | null;

  @Column('text', { name: 'event_type' })
  eventType!: string;

  @Column('text', { default: 'pending' })
  status!: DeliveryStatus;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('integer', { name: 'last_status_code', nullable: true })
  lastStatusCode!: number | null;

  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  @Column('timestamptz', { name: 'last_attempt_at', nullable: true })
  lastAttemptAt!: Date | null;

  @Column('timestamptz', { name: 'next_attempt_at', nullable: true })
  nextAttemptAt!: Date | null;

  @Column('timestamptz', { name: 'delivered_at', nullable: true })
  deliveredAt!: Date | null;

  @Timestamp('created_at')
  createdAt!: Date;

  @Column('text', { nullable: true })
  traceparent!: string | null;

  /** The delivery this one resends (the first of the event), or null. */
  @Column('bigint', { name: 'resend_of', nullable: true })
  resendOf!: number | null;

  /** To the end of the answer (or the failure). */
  @Column('integer', { name: 'last_duration_ms', nullable: true })
  lastDurationMs!: number | null;

  @Column('text', { name: 'last_response_excerpt', nullable: true })
  lastResponseExcerpt!: string | null;
}
