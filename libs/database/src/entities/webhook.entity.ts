import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type WebhookStatus = 'active' | 'disabled';

/**
 * A receiver URL subscribed to event types. The signing secret is stored as given (not
 * hashed): the worker needs it to sign every delivery. It is never logged nor shown again.
 */
@Entity('webhooks')
@Index(['accountId', 'id'])
export class Webhook {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('bigint', { name: 'account_id' })
  accountId!: number;

  @Column('text')
  url!: string;

  @Column('text', { array: true })
  events!: string[];

  @Column('text', { select: false })
  secret!: string;

  @Column('text', { default: 'active' })
  status!: WebhookStatus;

  @Column('timestamptz', { name: 'disabled_at', nullable: true })
  disabledAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
