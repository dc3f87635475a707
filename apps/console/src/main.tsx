import { render } from 'preact';
import { useCallback, useMemo, useState } from 'preact/hooks';
import './console.css';
import { ActivityView } from './activity-view';
import { KeysView } from './keys-view';
import { OverviewView } from './overview-view';
import { clientFor, describeError, forgetKey, rememberKey, storedKey } from './session';
import { WebhooksView } from './webhooks-view';

const VIEWS = [
  { id: 'overview', label: 'Overview', View: OverviewView },
  { id: 'keys', label: 'Keys', View: KeysView },
  { id: 'webhooks', label: 'Webhooks', View: WebhooksView },
  { id: 'activity', label: 'Messages and events', View: ActivityView },
] as const;
type ViewId = (typeof VIEWS)[number]['id'];

function KeyForm({ onKey, notice }: { onKey: (key: string) => void; notice?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="sign-in">
      <h1>Pet Store console</h1>
      <p>
        Paste an API key to see its account's usage, keys, webhooks and activity. The key stays in this browser tab
        only.
      </p>
      {notice && (
        <p class="error" role="alert">
          {notice}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          clientFor(key.trim())
            .account.get()
            .then(
              () => onKey(key.trim()),
              (err: unknown) => setError(describeError(err)),
            )
            .finally(() => setBusy(false));
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Open console
        </button>
      </form>
    </main>
  );
}

function App() {
  const [key, setKey] = useState(storedKey());
  const [notice, setNotice] = useState<string>();
  const [view, setView] = useState<ViewId>('overview');
  const client = useMemo(() => (key ? clientFor(key) : undefined), [key]);
  const signOut = useCallback((message?: string) => {
    forgetKey();
    setKey(null);
    setNotice(message);
  }, []);
  const onKeyRejected = useCallback(
    () => signOut('This key no longer works (revoked, expired or rotated out). Paste another.'),
    [signOut],
  );

  if (!client)
    return (
      <KeyForm
        notice={notice}
        onKey={(k) => {
          rememberKey(k);
          setNotice(undefined);
          setKey(k);
        }}
      />
    );
  const current = VIEWS.find((v) => v.id === view) ?? VIEWS[0];
  return (
    <>
      <header>
        <h1>Pet Store console</h1>
        <nav aria-label="Console sections">
          {VIEWS.map((v) => (
            <button
              key={v.id}
              type="button"
              aria-current={v.id === view ? 'page' : undefined}
              onClick={() => setView(v.id)}
            >
              {v.label}
            </button>
          ))}
        </nav>
        <button type="button" class="quiet" onClick={() => signOut()}>
          Forget key
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <current.View client={client} onKeyRejected={onKeyRejected} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
