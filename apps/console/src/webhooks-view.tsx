import { useState } from 'preact/hooks';
import type {
  CreatedWebhook,
  Delivery,
  DeliveryAttempt,
  NewWebhook,
  RecoveredWebhook,
  Webhook,
  WebhookUpdate,
} from '../../../packages/client/src/schema';
import type { PetstoreClient } from './session';
import { ErrorNote, SecretOnce, Section, useAction, useLoad, when } from './ui';

const RECENT = 10;
const DEFAULT_GRACE_SECONDS = 86_400;
type Panel = 'deliveries' | 'edit' | 'rotate' | 'recover';

/** The event types a webhook can subscribe to, as the service's own OpenAPI document lists them. */
async function eventTypes(): Promise<string[]> {
  const doc = (await (await fetch('/openapi.json')).json()) as {
    components: { schemas: { NewWebhook: { properties: { events: { items: { enum: string[] } } } } } };
  };
  return doc.components.schemas.NewWebhook.properties.events.items.enum;
}

function EventChoices({
  types,
  value,
  onChange,
}: {
  types: string[];
  value: string[];
  onChange: (events: string[]) => void;
}) {
  return (
    <fieldset>
      <legend>Events</legend>
      <div class="columns">
        {types.map((t) => (
          <label key={t} class="inline">
            <input
              type="checkbox"
              value={t}
              checked={value.includes(t)}
              onChange={(e) =>
                onChange((e.target as HTMLInputElement).checked ? [...value, t] : value.filter((x) => x !== t))
              }
            />{' '}
            {t}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** Every attempt of one delivery: when, HTTP status, duration, the answer's first bytes, error. */
function Attempts({
  client,
  webhookId,
  deliveryId,
  onKeyRejected,
}: {
  client: PetstoreClient;
  webhookId: number;
  deliveryId: number;
  onKeyRejected: () => void;
}) {
  const list = useLoad(
    async () => {
      const all: DeliveryAttempt[] = [];
      for await (const a of client.webhooks.attempts(webhookId, deliveryId, { limit: 100 })) all.push(a);
      return all;
    },
    [client, webhookId, deliveryId],
    onKeyRejected,
  );
  return (
    <>
      <ErrorNote message={list.error} />
      <table data-testid={`attempts-${deliveryId}`}>
        <caption>Attempts of delivery {deliveryId}</caption>
        <thead>
          <tr>
            <th scope="col">Attempt</th>
            <th scope="col">When</th>
            <th scope="col">Status</th>
            <th scope="col">Duration (ms)</th>
            <th scope="col">Error</th>
            <th scope="col">Response</th>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((a) => (
            <tr key={a.attempt}>
              <th scope="row">{a.attempt}</th>
              <td>{when(a.attemptedAt)}</td>
              <td>{a.statusCode ?? '—'}</td>
              <td>{a.durationMs}</td>
              <td>{a.error ?? '—'}</td>
              <td>
                <code class="excerpt">{a.responseExcerpt ?? ''}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data?.length === 0 && <p>No attempt yet.</p>}
    </>
  );
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
    async () =>
      (
        await client.call('GET', '/webhooks/{webhookId}/deliveries', {
          path: { webhookId: webhook.id },
          query: { order: 'newest', limit: RECENT },
        })
      ).data,
    [client, webhook.id],
    onKeyRejected,
  );
  const [shown, setShown] = useState<number>();
  const [resent, setResent] = useState<Delivery>();
  const action = useAction(onKeyRejected);
  return (
    <div>
      <ErrorNote message={list.error ?? action.error} />
      {resent && (
        <p role="status">
          Delivery {resent.resendOf} resent as delivery {resent.id}.
        </p>
      )}
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
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((d) => [
            <tr key={d.id} data-delivery-id={d.id}>
              <th scope="row">{d.id}</th>
              <td>{d.eventType}</td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.lastStatusCode ?? d.lastError ?? '—'}</td>
              <td>{when(d.nextAttemptAt)}</td>
              <td class="row">
                <button
                  type="button"
                  aria-expanded={shown === d.id}
                  aria-label={`Attempts of delivery ${d.id}`}
                  onClick={() => setShown(shown === d.id ? undefined : d.id)}
                >
                  Attempts
                </button>
                <button
                  type="button"
                  disabled={action.busy}
                  aria-label={`Resend delivery ${d.id}`}
                  onClick={() =>
                    void action.run(async () => {
                      setResent(await client.webhooks.resend(webhook.id, d.id));
                      list.reload();
                    })
                  }
                >
                  Resend
                </button>
              </td>
            </tr>,
            shown === d.id && (
              <tr key={`${d.id}-attempts`}>
                <td colSpan={7}>
                  <Attempts client={client} webhookId={webhook.id} deliveryId={d.id} onKeyRejected={onKeyRejected} />
                </td>
              </tr>
            ),
          ])}
        </tbody>
      </table>
    </div>
  );
}

/** PATCH with the fields changed only: an unchanged URL is not checked again. */
function EditWebhookForm({
  client,
  webhook,
  types,
  onSaved,
  onKeyRejected,
}: {
  client: PetstoreClient;
  webhook: Webhook;
  types: string[];
  onSaved: () => void;
  onKeyRejected: () => void;
}) {
  const [url, setUrl] = useState(webhook.url);
  const [description, setDescription] = useState(webhook.description ?? '');
  const [events, setEvents] = useState<string[]>(webhook.events);
  const [enabled, setEnabled] = useState(webhook.status === 'active');
  const action = useAction(onKeyRejected);
  return (
    <form
      class="stack"
      aria-label={`Edit the webhook to ${webhook.url}`}
      onSubmit={(e) => {
        e.preventDefault();
        const change: WebhookUpdate = {};
        if (url !== webhook.url) change.url = url;
        if (description !== (webhook.description ?? '')) change.description = description || null;
        if (events.join() !== webhook.events.join()) change.events = events as WebhookUpdate['events'];
        if (enabled !== (webhook.status === 'active')) change.enabled = enabled;
        void action.run(async () => {
          await client.webhooks.update(webhook.id, change);
          onSaved();
        });
      }}
    >
      <UrlField value={url} onChange={setUrl} />
      <label>
        Description{' '}
        <input
          name="description"
          maxLength={500}
          value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
      </label>
      <EventChoices types={types} value={events} onChange={setEvents} />
      <label class="inline">
        <input
          type="checkbox"
          name="enabled"
          checked={enabled}
          onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)}
        />{' '}
        Enabled (deliveries are sent)
      </label>
      <ErrorNote message={action.error} />
      <button type="submit" disabled={action.busy}>
        Save changes
      </button>
    </form>
  );
}

function RotateSecretForm({
  client,
  webhook,
  onRotated,
  onKeyRejected,
}: {
  client: PetstoreClient;
  webhook: Webhook;
  onRotated: (rotated: CreatedWebhook) => void;
  onKeyRejected: () => void;
}) {
  const [grace, setGrace] = useState(DEFAULT_GRACE_SECONDS);
  const action = useAction(onKeyRejected);
  return (
    <form
      class="stack"
      aria-label={`Rotate the secret of the webhook to ${webhook.url}`}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => onRotated(await client.webhooks.rotate(webhook.id, { gracePeriodSeconds: grace })));
      }}
    >
      <label>
        Grace period (seconds, at most 7 days): the old secret also signs deliveries until then{' '}
        <input
          type="number"
          name="gracePeriodSeconds"
          min={0}
          max={604_800}
          value={grace}
          onInput={(e) => setGrace(Number((e.target as HTMLInputElement).value))}
        />
      </label>
      <ErrorNote message={action.error} />
      <button type="submit" disabled={action.busy}>
        Rotate secret
      </button>
    </form>
  );
}

/** A datetime-local input's value (local time, to the minute) for `ms`. */
const localMinute = (ms: number) => {
  const d = new Date(ms);
  return new Date(ms - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** Resends every event whose deliveries since the chosen time all failed, and re-enables the webhook. */
function RecoverForm({
  client,
  webhook,
  onRecovered,
  onKeyRejected,
}: {
  client: PetstoreClient;
  webhook: Webhook;
  onRecovered: () => void;
  onKeyRejected: () => void;
}) {
  const [since, setSince] = useState(() => localMinute(Date.now() - 86_400_000));
  const [done, setDone] = useState<RecoveredWebhook>();
  const action = useAction(onKeyRejected);
  return (
    <form
      class="stack"
      aria-label={`Recover the failed deliveries of the webhook to ${webhook.url}`}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          setDone(await client.webhooks.recover(webhook.id, { since: new Date(since).toISOString() }));
          onRecovered();
        });
      }}
    >
      <label>
        Resend the events whose deliveries failed since{' '}
        <input
          type="datetime-local"
          name="since"
          required
          value={since}
          onInput={(e) => setSince((e.target as HTMLInputElement).value)}
        />
      </label>
      <ErrorNote message={action.error} />
      {done && (
        <p role="status">
          {done.queued} {done.queued === 1 ? 'event' : 'events'} queued again
          {done.skipped > 0 && `, ${done.skipped} of types no longer subscribed skipped`}
          {done.more && '; more are left: recover again'}.
        </p>
      )}
      <button type="submit" disabled={action.busy}>
        Recover
      </button>
    </form>
  );
}

function CreateWebhookForm({
  client,
  types,
  onCreated,
  onKeyRejected,
}: {
  client: PetstoreClient;
  types: string[];
  onCreated: (secret: string) => void;
  onKeyRejected: () => void;
}) {
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
      <UrlField value={url} onChange={setUrl} />
      <EventChoices types={types} value={events} onChange={setEvents} />
      <ErrorNote message={action.error} />
      <button type="submit" disabled={action.busy}>
        Create webhook
      </button>
    </form>
  );
}

/** What the secret notice says after a rotation: until when the replaced secret still signs. */
const rotatedLabel = (w: CreatedWebhook) =>
  `New signing secret for ${w.url}. ${
    w.previousSecretExpiresAt
      ? `Until ${when(w.previousSecretExpiresAt)} deliveries are also signed with the old one.`
      : 'The old one no longer signs deliveries.'
  }`;

export function WebhooksView({ client, onKeyRejected }: { client: PetstoreClient; onKeyRejected: () => void }) {
  const hooks = useLoad(() => client.webhooks.list(), [client], onKeyRejected);
  const types = useLoad(eventTypes, [], onKeyRejected);
  const [open, setOpen] = useState<{ id: number; panel: Panel }>();
  const [secret, setSecret] = useState<{ label: string; secret: string }>();
  const action = useAction(onKeyRejected);
  const act = (work: () => Promise<unknown>) =>
    void action.run(async () => {
      await work();
      hooks.reload();
    });
  const toggle = (w: Webhook, panel: Panel, label: string) => (
    <button
      type="button"
      aria-expanded={open?.id === w.id && open.panel === panel}
      onClick={() => setOpen(open?.id === w.id && open.panel === panel ? undefined : { id: w.id, panel })}
    >
      {label}
    </button>
  );
  const closeAndReload = () => {
    setOpen(undefined);
    hooks.reload();
  };

  return (
    <>
      {secret && <SecretOnce label={secret.label} secret={secret.secret} onDone={() => setSecret(undefined)} />}
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
              {w.description && <p>{w.description}</p>}
              <p class="hint">{w.events.join(', ')}</p>
              {w.previousSecretExpiresAt && (
                <p class="hint">The previous secret also signs deliveries until {when(w.previousSecretExpiresAt)}.</p>
              )}
              <div class="row">
                {toggle(w, 'deliveries', 'Deliveries')}
                {toggle(w, 'edit', 'Edit')}
                {toggle(w, 'rotate', 'Rotate secret')}
                {toggle(w, 'recover', 'Recover')}
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
              {open?.id === w.id && open.panel === 'deliveries' && (
                <Deliveries client={client} webhook={w} onKeyRejected={onKeyRejected} />
              )}
              {open?.id === w.id && open.panel === 'edit' && (
                <EditWebhookForm
                  client={client}
                  webhook={w}
                  types={types.data ?? []}
                  onSaved={closeAndReload}
                  onKeyRejected={onKeyRejected}
                />
              )}
              {open?.id === w.id && open.panel === 'recover' && (
                <RecoverForm client={client} webhook={w} onRecovered={hooks.reload} onKeyRejected={onKeyRejected} />
              )}
              {open?.id === w.id && open.panel === 'rotate' && (
                <RotateSecretForm
                  client={client}
                  webhook={w}
                  onRotated={(rotated) => {
                    setSecret({ label: rotatedLabel(rotated), secret: rotated.secret });
                    closeAndReload();
                  }}
                  onKeyRejected={onKeyRejected}
                />
              )}
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Create a webhook">
        <CreateWebhookForm
          client={client}
          types={types.data ?? []}
          onCreated={(s) => {
            setSecret({ label: 'Signing secret of the new webhook.', secret: s });
            hooks.reload();
          }}
          onKeyRejected={onKeyRejected}
        />
      </Section>
    </>
  );
}

function UrlField({ value, onChange }: { value: string; onChange: (url: string) => void }) {
  return (
    <label>
      URL{' '}
      <input
        type="url"
        name="url"
        required
        value={value}
        onInput={(e) => onChange((e.target as HTMLInputElement).value)}
      />
    </label>
  );
}
