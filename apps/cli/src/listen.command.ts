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

// Whole sequences first (their parameters are printable characters): CSI, then strings (OSC, DCS, SOS, PM, APC) up to
// their terminator or the field's end, then other ESC sequences; each in its 7-bit (ESC) and 8-bit (C1) form.
const ESCAPES = new RegExp(
  [
    '(?:\\u001b\\[|\\u009b)[0-?]*[ -/]*[@-~]?',
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d-\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?',
    '\\u001b[ -/]*[0-~]?',
  ].join('|'),
  'g',
);
// What is left of C0, DEL and C1, and the Unicode line and paragraph separators.
const CONTROL_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029';
const CONTROLS = new RegExp(`[${CONTROL_CLASS}]`, 'g');

/**
 * Server text as it may be printed: no terminal control (colours, cursor moves, titles, hyperlinks) and no line break,
 * so a server cannot restyle the terminal nor forge an output line.
 */
export function printable(text: unknown): string {
  return String(text).replace(ESCAPES, '').replace(CONTROLS, '');
}

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
  try {
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
        error =
          (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
      }
      // Every field but the receiver's status may come from the server (or echo it, as an error about a header).
      const [type, shownId, shownError] = [
        printable(event.type),
        printable(id),
        error === null ? null : printable(error),
      ];
      print(
        options.json
          ? JSON.stringify({ id: typeof event.id === 'number' ? event.id : shownId, type, status, error: shownError })
          : `${new Date().toISOString()}  ${type}  ${shownId}  -> ${status ?? `failed: ${shownError}`}`,
      );
    }
  } catch (err) {
    // An error answer's message is the server's text too.
    if (err instanceof Error) err.message = printable(err.message);
    throw err;
  }
}
