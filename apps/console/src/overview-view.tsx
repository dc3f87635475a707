import { useEffect, useState } from 'preact/hooks';
import type { ApiKey, RateLimitStatus } from '../../../packages/client/src/schema';
import type { PetstoreClient } from './session';
import { ErrorNote, Section, useLoad, when } from './ui';
import { UsageChart } from './usage-chart';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The overview refreshes itself this often while it is shown. */
const REFRESH_MS = 10_000;

function Window({ name, w }: { name: string; w: RateLimitStatus['minute'] }) {
  return (
    <div class="window">
      <h3>This {name}</h3>
      <meter min={0} max={w.limit} value={w.used} aria-label={`Requests used this ${name}`} />
      <p data-testid={`window-${name}`}>
        {w.used} of {w.limit} used, {w.remaining} left; resets {new Date(w.reset * 1000).toLocaleTimeString()}
      </p>
    </div>
  );
}

export function OverviewView({ client, onKeyRejected }: { client: PetstoreClient; onKeyRejected: () => void }) {
  const [keyId, setKeyId] = useState<number | undefined>();
  const [round, setRound] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setRound((r) => r + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const account = useLoad(() => client.account.get(), [client], onKeyRejected);
  // Listing keys needs the admin scope; without it the usage is the account's only.
  const keys = useLoad<ApiKey[]>(() => client.keys.list().catch(() => []), [client], onKeyRejected);
  const status = useLoad(() => client.account.rateLimit(), [client, round], onKeyRejected);
  const usage = useLoad(
    async () => {
      const now = Date.now();
      const [day, month] = await Promise.all([
        client.account.usage({ granularity: 'hour', from: new Date(now - 23 * HOUR_MS).toISOString(), keyId }),
        client.account.usage({ granularity: 'day', from: new Date(now - 29 * DAY_MS).toISOString(), keyId }),
      ]);
      return { day, month };
    },
    [client, keyId, round],
    onKeyRejected,
  );

  return (
    <>
      <Section
        title="Plan and limits"
        actions={
          <button type="button" onClick={() => setRound((r) => r + 1)}>
            Refresh
          </button>
        }
      >
        <ErrorNote message={account.error ?? status.error} />
        {account.data && (
          <p data-testid="plan">
            <strong>{account.data.name}</strong>: {account.data.plan} plan, {account.data.limits.perMinute} requests a
            minute and {account.data.limits.perDay} a day.
          </p>
        )}
        {status.data && (
          <div class="windows">
            <Window name="minute" w={status.data.minute} />
            <Window name="day" w={status.data.day} />
            {status.data.banned && (
              <p class="error" role="alert">
                This key is banned for {status.data.banSecondsLeft} more seconds for ignoring 429 answers.
              </p>
            )}
          </div>
        )}
      </Section>
      <Section title="Usage">
        <label>
          Show usage of{' '}
          <select
            value={keyId ?? ''}
            onChange={(e) => {
              const v = (e.target as HTMLSelectElement).value;
              setKeyId(v ? Number(v) : undefined);
            }}
          >
            <option value="">the whole account</option>
            {(keys.data ?? []).map((k) => (
              <option key={k.id} value={k.id}>
                key {k.name} ({k.prefix}…)
              </option>
            ))}
          </select>
        </label>
        <ErrorNote message={usage.error} />
        {usage.data && (
          <>
            <UsageChart title="Last 24 hours, per hour" buckets={usage.data.day.buckets} unit="hour" />
            <UsageChart title="Last 30 days, per day" buckets={usage.data.month.buckets} unit="day" />
            <p class="hint">Updated {when(new Date().toISOString())}; the current hour counts as requests arrive.</p>
          </>
        )}
      </Section>
    </>
  );
}
