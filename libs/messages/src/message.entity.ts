import { randomFillSync } from 'node:crypto';
import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { isIn, Timestamp } from '@app/database';

export const MESSAGE_STATUSES = ['queued', 'processing', 'processed', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** In characters (Unicode code points); the table checks it too. */
export const MESSAGE_MAX_LENGTH = 4096;
export const MESSAGE_ID_PATTERN = /^msg_[0-9a-f]{28}$/;

// The random parts of 512 ids, filled at once: randomBytes(8) made a Buffer and its backing store per POST.
const randomPool = Buffer.alloc(8 * 512);
let randomUsed = randomPool.length;

/** 12 hex digits of ms, then 16 random: ids sort by creation time (keyset pages follow it) and cannot be guessed. */
export function newMessageId(now = Date.now()): string {
  if (randomUsed === randomPool.length) {
    randomFillSync(randomPool);
    randomUsed = 0;
  }
  const random = randomPool.toString('hex', randomUsed, (randomUsed += 8));
  return `msg_${now.toString(16).padStart(12, '0')}${random}`;
}

/** Time-partitioned (SCHEMA_EXCEPTIONS): its keys and indexes are the migrations' alone. */
@Entity({ name: 'messages', synchronize: false })
@Check('messages_id_check', `id ~ '${MESSAGE_ID_PATTERN.source}'`)
@Check('messages_message_check', `char_length(message) BETWEEN 1 AND ${MESSAGE_MAX_LENGTH}`)
@Check('messages_status_check', isIn('status', MESSAGE_STATUSES))
export class MessageEntity {
  /** The key leads with the account: (account_id, id). */
  @PrimaryColumn('bigint', { name: 'account_id', primaryKeyConstraintName: 'messages_pkey' })
  accountId!: number;

  /** COLLATE "C": compared byte by byte, so keyset pages follow creation order. */
  @PrimaryColumn('text', { collation: 'C', primaryKeyConstraintName: 'messages_pkey' })
  id!: string;

  @Column('text')
  message!: string;

  @Column('text', { default: 'queued' })
  status!: MessageStatus;

  /** Started runs: a retry or a crashed worker adds one. */
  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('integer', { nullable: true })
  characters!: number | null;

  @Column('text', { nullable: true })
  sha256!: string | null;

  /** Why the last attempt failed (the final reason once `failed`). */
  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  @Timestamp('created_at')
  createdAt!: Date;

  @Column('timestamptz', { name: 'processed_at', nullable: true })
  processedAt!: Date | null;

  @Column('timestamptz', { name: 'failed_at', nullable: true })
  failedAt!: Date | null;

  @Column('text', { nullable: true })
  traceparent!: string | null;
}
