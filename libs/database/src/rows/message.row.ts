import { randomBytes } from 'node:crypto';
export const MESSAGE_STATUSES = ['queued', 'processing', 'processed', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Longest accepted message, in characters (Unicode code points); the migration checks it too. */
export const MESSAGE_MAX_LENGTH = 4096;
export const MESSAGE_ID_PATTERN = /^msg_[0-9a-f]{28}$/;

/**
 * `msg_` + 12 hex digits of milliseconds since the epoch + 16 random hex digits: ids sort by
 * creation time (keyset pages follow it) and cannot be guessed.
 */
export function newMessageId(now = Date.now()): string {
  return `msg_${now.toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}`;
}

/** A message accepted by POST /messages; the worker moves it queued → processing → processed | failed. */
export interface Message {
  id: string;
  accountId: number;
  message: string;
  status: MessageStatus;

  /** How many times the worker started processing it (a retry or a crashed worker adds one). */
  attempts: number;

  /** The processing result: the text's length in characters and its SHA-256 (hex). */
  characters: number | null;
  sha256: string | null;

  /** Why the last attempt failed (the final reason once `failed`). */
  lastError: string | null;
  createdAt: Date;
  processedAt: Date | null;
  failedAt: Date | null;
}

/** The message as API users and event consumers see it. */
export interface MessageView {
  id: string;
  message: string;
  status: MessageStatus;
  createdAt: string;
  attempts: number;
  result: { characters: number; sha256: string } | null;
  failureReason: string | null;
  processedAt: string | null;
  failedAt: string | null;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toMessageView(m: Message): MessageView {
  return {
    id: m.id,
    message: m.message,
    status: m.status,
    createdAt: new Date(m.createdAt).toISOString(),
    attempts: m.attempts,
    result: m.sha256 !== null && m.characters !== null ? { characters: m.characters, sha256: m.sha256 } : null,
    failureReason: m.status === 'failed' ? m.lastError : null,
    processedAt: iso(m.processedAt),
    failedAt: iso(m.failedAt),
  };
}
