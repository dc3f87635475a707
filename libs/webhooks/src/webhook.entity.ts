import { Check, Column, Entity, Index } from 'typeorm';
import { AccountId, IdentityKey, isIn, Timestamp } from '@app/database';

export const WEBHOOK_STATUSES = ['active', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

// The signing secret cannot be hashed (the worker signs every delivery with it): it is stored sealed under
// WEBHOOK_SECRET_KEYS (secret-box.ts), never logged nor shown again.
@Entity('webhooks')
@Check('webhooks_url_check', 'length(url) <= 2048')
@Check('webhooks_events_check', 'cardinality(events) > 0')
@Check('webhooks_status_check', isIn('status', WEBHOOK_STATUSES))
@Check('webhooks_description_check', 'length(description) <= 500')
@Index('webhooks_account_id', ['accountId', 'id'])
export class WebhookEntity {
  @IdentityKey('webhooks')
  id!: number;

  @AccountId('webhooks')
  accountId!: number;

  @Column('text')
  url!: string;

  @Column('text', { array: true })
  events!: string[];

  @Column('text')
  secret!: string;

  @Column('text', { default: 'active' })
  status!: WebhookStatus;

  @Column('timestamptz', { name: 'disabled_at', nullable: true })
  disabledAt!: Date | null;

  @Timestamp('created_at')
  createdAt!: Date;

  @Column('text', { nullable: true })
  description!: string | null;

  /** The secret before the last rotation, sealed the same way; used until previousSecretExpiresAt. */
  @Column('text', { name: 'previous_secret', nullable: true })
  previousSecret!: string | null;

  @Column('timestamptz', { name: 'previous_secret_expires_at', nullable: true })
  previousSecretExpiresAt!: Date | null;

  /** Made by a key with the `admin` scope: only such a key reads or changes it. */
  @Column('boolean', { name: 'created_by_admin', default: false })
  createdByAdmin!: boolean;
}
