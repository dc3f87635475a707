import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { isIn, Timestamp } from '@app/database';
import { pooledRandomFill, writeHex } from '@app/ids';

export const MESSAGE_STATUSES = ['queued', 'processing', 'processed', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** In characters (Unicode code points); the table checks it too. */
export const MESSAGE_MAX_LENGTH = 4096;
export const MESSAGE_ID_PATTERN = /^msg_[0-9a-f]{28}$/;

// The random part and the id are written into scratch buffers and read out as one string: the hex pieces and
// their joins were four strings more.
const stamp = Buffer.alloc(6);
const random = Buffer.alloc(8);
const idText = Buffer.from('msg_0000000000000000000000000000', 'latin1');

/** 12 hex digits of ms, then 16 random: ids sort by creation time (keyset pages follow it) and cannot be guessed. */
export function newMessageId(now = Date.now()): string {
  // Six bytes: up to 2^48 ms (year 10889).
  stamp.writeUIntBE(now, 0, 6);
  writeHex(idText, 4, stamp, 0, 6);
  writeHex(idText, 16, pooledRandomFill(random), 0, 8);
  return idText.toString('latin1');
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

  /** The process job that carries the message when it is not the message's own id: its batch's first message. */
  @Column('text', { name: 'job_id', nullable: true })
  jobId!: string | null;
}
