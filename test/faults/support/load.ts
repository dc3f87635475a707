/** One request of a load run: when it started (ms since the run began), what came back, how long it took. */
export interface Sample {
  at: number;
  ms: number;
  /** HTTP status, or the failure ('timeout', 'ECONNREFUSED', 'ECONNRESET', ...) when none came. */
  status: number | string;
  code?: string;
  retryAfter?: string | null;
  /** The `id` of what a 2xx answer created or named (a 202's message), to follow it afterwards. */
  id?: string;
}

export interface LoadOptions {
  url: string;
  apiKey?: string;
  concurrency: number;
  /** Which request each turn sends (path, method, body). */
  next: (i: number) => { method?: string; path: string; body?: unknown };
  /** A request not answered by then counts as 'timeout', i.e. a hang. */
  timeoutMs?: number;
  /** Pause between one worker's requests, to keep the machine (2 shared cores) usable. */
  pauseMs?: number;
}

export interface RunningLoad {
  readonly samples: Sample[];
  /** Stops sending and resolves when every request in flight has settled. */
  stop(): Promise<Sample[]>;
  /** Milliseconds since the run began, on the same clock as Sample.at. */
  elapsed(): number;
}

function failure(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string }; code?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.cause?.code ?? e.code ?? e.name ?? 'error';
}

/** A closed-loop load generator over fetch: `concurrency` workers, each sending one request at a time. */
export function startLoad(opts: LoadOptions): RunningLoad {
  const t0 = Date.now();
  const samples: Sample[] = [];
  let stopped = false;
  let i = 0;
  const worker = async (): Promise<void> => {
    while (!stopped) {
      const { method = 'GET', path, body } = opts.next(i++);
      const at = Date.now() - t0;
      const headers: Record<string, string> = {};
      if (opts.apiKey) headers.Authorization = `Bearer ${opts.apiKey}`;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      try {
        const res = await fetch(`${opts.url}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
        });
        const text = await res.text();
        let code: string | undefined;
        let id: string | undefined;
        if (res.status >= 400) code = (JSON.parse(text) as { code?: string }).code;
        else if (res.status === 201 || res.status === 202) id = String((JSON.parse(text) as { id?: unknown }).id);
        samples.push({
          at,
          ms: Date.now() - t0 - at,
          status: res.status,
          code,
          retryAfter: res.headers.get('retry-after'),
          ...(id === undefined ? {} : { id }),
        });
      } catch (err) {
        samples.push({ at, ms: Date.now() - t0 - at, status: failure(err) });
      }
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  };
  const workers = Array.from({ length: opts.concurrency }, worker);
  return {
    samples,
    elapsed: () => Date.now() - t0,
    async stop() {
      stopped = true;
      await Promise.all(workers);
      return samples;
    },
  };
}

/** Counts by status (or failure), e.g. { '200': 812, '503': 97 }. */
export function countByStatus(samples: Sample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of samples) counts[String(s.status)] = (counts[String(s.status)] ?? 0) + 1;
  return counts;
}

export function maxMs(samples: Sample[]): number {
  return samples.reduce((m, s) => Math.max(m, s.ms), 0);
}

export function percentile(samples: Sample[], p: number): number {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0;
}

/** One summary line per scenario in the suite output (the figures the report quotes). */
export function report(scenario: string, figures: Record<string, unknown>): void {
  console.log(`[faults] ${scenario}: ${JSON.stringify(figures)}`);
}
