import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeError, isKeyRejected } from './session';

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and on reload(); a rejected key signs the console out (onKeyRejected). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], onKeyRejected: () => void): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (err: unknown) => {
        if (!current) return;
        if (isKeyRejected(err)) onKeyRejected();
        setState((s) => ({ ...s, error: describeError(err), loading: false }));
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

/** Runs an action, reporting its failure; `busy` while it runs. */
export function useAction(onKeyRejected: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(
    async (action: () => Promise<void>) => {
      setBusy(true);
      setError(undefined);
      try {
        await action();
      } catch (err) {
        if (isKeyRejected(err)) onKeyRejected();
        setError(describeError(err));
      } finally {
        setBusy(false);
      }
    },
    [onKeyRejected],
  );
  return { busy, error, run };
}

export const ErrorNote = ({ message }: { message?: string }) =>
  message ? (
    <p class="error" role="alert">
      {message}
    </p>
  ) : null;

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section aria-labelledby={id}>
      <div class="section-head">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A UTC instant as the person's local date and time. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** A secret shown once, with a copy button; the person must copy it now. */
export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> It is shown only now: copy it and keep it safe.
      </p>
      <code data-testid="secret">{secret}</code>
      <div class="row">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard?.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
