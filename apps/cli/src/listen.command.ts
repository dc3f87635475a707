import { PetstoreClient } from '@petstore/client';
import type { Event } from '@petstore/client';
import { generateWebhookSecret, standardWebhookHeaders } from '@app/webhooks';

export interface ListenOptions {
  apiKey: string;
  baseUrl: string;
  forwardTo: string;
  types?: Event['type'][];
  json: boolean;
}

/** As long as a delivery may take (WEBHOOK_TIMEOUT_MS's default). */
const FORWARD_TIMEOUT_MS = 10_000;

/**
 * `petstore listen`: follows GET /v1/events/stream and POSTs each event to a local URL as a Standard Webhooks
 * delivery, signed with a secret made for this run and printed first: a receiver under development verifies it
 * as it would a real delivery, with no public URL.
 */
export async function listen(
  options: ListenOptions,
  print: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const secret = generateWebhookSecret();
  print(
    options.json
      ? JSON.stringify({ secret })
      : `Forwarding events to ${options.forwardTo}, signed with ${secret} (Ctrl-C to stop)`,
  );
  const client = new PetstoreClient({ apiKey: options.apiKey, baseUrl: options.baseUrl });
  for await (const event of client.events.stream({ types: options.types, signal })) {
    const body = JSON.stringify(event);
    const id = String(event.id);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const answer = await fetch(options.forwardTo, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'petstore-listen/1',
          ...standardWebhookHeaders([secret], id, body),
          'Petstore-Event-Id': id,
          'Petstore-Event-Type': event.type,
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
      });
      await answer.arrayBuffer();
      status = answer.status;
    } catch (err) {
      if (signal.aborted) return;
      error = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    }
    print(
      options.json
        ? JSON.stringify({ id: event.id, type: event.type, status, error })
        : `${new Date().toISOString()}  ${event.type}  ${id}  -> ${status ?? `failed: ${error}`}`,
    );
  }
}
