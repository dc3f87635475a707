import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event (or test ping, eventId null) to one webhook, with its attempts so far. */
@Entity('webhook_deliveries')
@Index(['webhookId', 'eventId'], { unique: true })
@Index(['webhookId', 'id'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('bigint', { name: 'webhook_id' })
  webhookId!: number;

  @Column('bigint', { name: 'account_id' })
  accountId!: number;

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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
