import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { send } from './load';

export interface WebhookReceiver {
  server: Server;
  url: string;
  /** When each delivery's body was read (performance.now()). */
  times: number[];
}

/** Answers 204 at once so the worker is what is measured. */
export function webhookReceiver(): Promise<WebhookReceiver> {
  const times: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      times.push(performance.now());
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, times }),
    ),
  );
}

/** A webhook on pet.created to `hookUrl`, then `count` pets created through the API: events for a worker to deliver. */
export async function queuePetCreated(apiUrl: string, apiKey: string, hookUrl: string, count: number): Promise<void> {
  const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
  const post = (path: string, body: object) =>
    fetch(`${apiUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const category = (await (await post('/v1/categories', { name: 'hooks' })).json()) as { id: number };
  const hook = await post('/v1/webhooks', { url: hookUrl, events: ['pet.created'] });
  if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${await hook.text()}`);
  const body = JSON.stringify({ name: 'hooked', categoryId: category.id });
  await send({ url: `${apiUrl}/v1/pets`, method: 'POST', headers, body }, count);
}
