import { MessageStatus } from './message.entity';
import { Message } from './messages.queries';

/** As API users and event consumers see it. */
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
