import { useState } from 'preact/hooks';
import type { Delivery, NewWebhook, Webhook } from '../../../packages/client/src/schema';
import type { PetstoreClient } from './session';
import { ErrorNote, SecretOnce, Section, useAction, useLoad, when } from './ui';

const RECENT = 10;

/** The event types a webhook can subscribe to, as the service's own OpenAPI document lists them. */
async function eventTypes(): Promise<string[]> {
  const doc = (await (await fetch('/openapi.json')).json()) as {
    components: { schemas: { NewWebhook: { properties: { events: { items: { enum: string[] } } } } } };
  };
  return doc.components.schemas.NewWebhook.properties.events.items.enum;
}

function Deliveries({
  client,
  webhook,
  onKeyRejected,
}: {
  client: PetstoreClient;
  webhook: Webhook;
  onKeyRejected: () => void;
}) {
  const list = useLoad(
    () =>
      client.data<Delivery[]>('GET', `/v1/webhooks/${webhook.id}/deliveries`, {
        query: { order: 'newest', limit: RECENT },
      }),
    [client, webhook.id],
    onKeyRejected,
  );
  return (
    <div>
      <ErrorNote message={list.error} />
      <table data-testid={`deliveries-${webhook.id}`}>
        <caption>
          Latest deliveries to {webhook.url}{' '}
          <button type="button" onClick={list.reload}>
            Refresh
          </button>
        </caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Response</th>
            <th scope="col">Next retry</th>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((d) => (
            <tr key={d.id}>
              <th scope="row">{d.id}</th>
              <td>{d.eventType}</td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.lastStatusCode ?? d.lastError ?? '—'}</td>
              <td>{when(d.nextAttemptAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CreateWebhookForm({
  client,
  onCreated,
  onKeyRejected,
}: {
  client: PetstoreClient;
  onCreated: (secret: string) => void;
  onKeyRejected: () => void;
}) {
  const types = useLoad(eventTypes, [], onKeyRejected);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const action = useAction(onKeyRejected);
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          const created = await client.webhooks.create({ url, events: events as NewWebhook['events'] });
          setUrl('');
          onCreated(created.secret);
        });
      }}
    >
      <label>
        URL{' '}
        <input
          type="url"
          name="url"
          required
          value={url}
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
        />
      </label>
      <fieldset>
        <legend>Events</legend>
        <div class="columns">
          {(types.data ?? []).map((t) => (
            <label key={t} class="inline">
              <input
                type="checkbox"
                value={t}
                checked={events.includes(t)}
                onChange={(e) =>
                  setEvents((now) =>
                    (e.target as HTMLInputElement).checked ? [...now, t] : now.filter((x) => x !== t),
                  )
                }
              />{' '}
              {t}
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorNote message={action.error} />
      <button type="submit" disabled={action.busy}>
        Create webhook
      </button>
    </form>
  );
}

export function WebhooksView({ client, onKeyRejected }: { client: PetstoreClient; onKeyRejected: () => void }) {
  const hooks = useLoad(() => client.webhooks.list(), [client], onKeyRejected);
  const [open, setOpen] = useState<number>();
  const [secret, setSecret] = useState<string>();
  const action = useAction(onKeyRejected);
  const act = (work: () => Promise<unknown>) =>
    void action.run(async () => {
      await work();
      hooks.reload();
    });

  return (
    <>
      {secret && (
        <SecretOnce label="Signing secret of the new webhook." secret={secret} onDone={() => setSecret(undefined)} />
      )}
      <Section title="Webhooks">
        <ErrorNote message={hooks.error ?? action.error} />
        {hooks.data?.length === 0 && <p>No webhooks yet.</p>}
        <ul class="cards">
          {(hooks.data ?? []).map((w) => (
            <li key={w.id} data-webhook-id={w.id}>
              <p>
                <strong>{w.url}</strong> — {w.status}
                {w.disabledAt && `, disabled ${when(w.disabledAt)}`}
              </p>
              <p class="hint">{w.events.join(', ')}</p>
              <div class="row">
                <button
                  type="button"
                  aria-expanded={open === w.id}
                  onClick={() => setOpen(open === w.id ? undefined : w.id)}
                >
                  Deliveries
                </button>
                <button type="button" disabled={action.busy} onClick={() => act(() => client.webhooks.test(w.id))}>
                  Send test delivery
                </button>
                {w.status === 'disabled' && (
                  <button type="button" disabled={action.busy} onClick={() => act(() => client.webhooks.enable(w.id))}>
                    Re-enable
                  </button>
                )}
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() => confirm(`Delete the webhook to ${w.url}?`) && act(() => client.webhooks.delete(w.id))}
                >
                  Delete
                </button>
              </div>
              {open === w.id && <Deliveries client={client} webhook={w} onKeyRejected={onKeyRejected} />}
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Create a webhook">
        <CreateWebhookForm
          client={client}
          onCreated={(s) => {
            setSecret(s);
            hooks.reload();
          }}
          onKeyRejected={onKeyRejected}
        />
      </Section>
    </>
  );
}
