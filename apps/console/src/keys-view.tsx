import { useState } from 'preact/hooks';
import type { IssuedApiKey } from '../../../packages/client/src/schema';
import type { PetstoreClient } from './session';
import { ErrorNote, SecretOnce, Section, useAction, useLoad, when } from './ui';

const SCOPES = ['read', 'write', 'admin'] as const;
const DEFAULT_GRACE_SECONDS = 86_400;

function CreateKeyForm({
  client,
  onIssued,
  onKeyRejected,
}: {
  client: PetstoreClient;
  onIssued: (k: IssuedApiKey) => void;
  onKeyRejected: () => void;
}) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['read', 'write']);
  const [expires, setExpires] = useState('');
  const action = useAction(onKeyRejected);
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          const issued = await client.keys.create({
            name,
            scopes: scopes as IssuedApiKey['scopes'],
            expiresAt: expires ? new Date(expires).toISOString() : undefined,
          });
          setName('');
          onIssued(issued);
        });
      }}
    >
      <label>
        Name{' '}
        <input
          name="name"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label key={s} class="inline">
            <input
              type="checkbox"
              name="scopes"
              value={s}
              checked={scopes.includes(s)}
              onChange={(e) =>
                setScopes((now) => ((e.target as HTMLInputElement).checked ? [...now, s] : now.filter((x) => x !== s)))
              }
            />{' '}
            {s}
          </label>
        ))}
      </fieldset>
      <label>
        Expires (optional){' '}
        <input
          type="datetime-local"
          name="expiresAt"
          value={expires}
          onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
        />
      </label>
      <ErrorNote message={action.error} />
      <button type="submit" disabled={action.busy}>
        Create key
      </button>
    </form>
  );
}

export function KeysView({ client, onKeyRejected }: { client: PetstoreClient; onKeyRejected: () => void }) {
  const keys = useLoad(() => client.keys.list(), [client], onKeyRejected);
  const [issued, setIssued] = useState<{ label: string; secret: string }>();
  const [grace, setGrace] = useState(DEFAULT_GRACE_SECONDS);
  const action = useAction(onKeyRejected);
  const done = (label: string) => (k: IssuedApiKey) => {
    setIssued({ label, secret: k.secret });
    keys.reload();
  };

  return (
    <>
      {issued && <SecretOnce label={issued.label} secret={issued.secret} onDone={() => setIssued(undefined)} />}
      <Section title="API keys">
        <ErrorNote message={keys.error ?? action.error} />
        <label>
          Grace period when rotating (seconds){' '}
          <input
            type="number"
            min={0}
            max={604_800}
            value={grace}
            onInput={(e) => setGrace(Number((e.target as HTMLInputElement).value))}
          />
        </label>
        <table data-testid="keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scopes</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(keys.data ?? []).map((k) => (
              <tr key={k.id} data-key-id={k.id}>
                <th scope="row">{k.name}</th>
                <td>
                  <code>{k.prefix}</code>
                </td>
                <td>{k.scopes.join(', ')}</td>
                <td>{k.rotatedOutAt ? `rotated out ${when(k.rotatedOutAt)}` : when(k.expiresAt)}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td class="row">
                  <button
                    type="button"
                    disabled={action.busy}
                    aria-label={`Rotate key ${k.name}`}
                    onClick={() =>
                      void action.run(async () =>
                        done(`New secret for ${k.name}.`)(
                          await client.keys.rotate(k.id, { gracePeriodSeconds: grace }),
                        ),
                      )
                    }
                  >
                    Rotate
                  </button>
                  <button
                    type="button"
                    disabled={action.busy}
                    aria-label={`Revoke key ${k.name}`}
                    onClick={() => {
                      if (!confirm(`Revoke key ${k.name}? Requests with it are refused at once.`)) return;
                      void action.run(async () => {
                        await client.keys.revoke(k.id);
                        keys.reload();
                      });
                    }}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Create a key">
        <CreateKeyForm client={client} onIssued={done('New key created.')} onKeyRejected={onKeyRejected} />
      </Section>
    </>
  );
}
