import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { parse } from 'yaml';

/**
 * The Grafana dashboard and the Prometheus alert rules in deploy/observability chart and alert
 * on metrics the code exports: a renamed or misspelt metric would leave a panel empty and an
 * alert silent, which nobody notices until it matters. (promtool checks the rules' syntax and
 * behaviour in .ci/run.)
 */
const root = join(__dirname, '..', '..');
const observability = join(root, 'deploy', 'observability');

/**
 * Every `name: 'petstore_…'` a prom-client metric is declared with under apps/ and libs/ (specs aside), and
 * prom-client's default metrics under the prefix the code collects them with.
 */
function definedMetrics(): Set<string> {
  const names = new Set<string>();
  const source = readFileSync(join(root, 'libs', 'observability', 'src', 'http-metrics.ts'), 'utf8');
  const prefix = /collectDefaultMetrics\(\{ prefix: '(\w+)' \}\)/.exec(source)?.[1];
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix });
  for (const metric of defaults.getMetricsAsArray()) names.add(metric.name);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/\bname: '(petstore_[a-z0-9_]+)'/g)) names.add(m[1]);
      }
    }
  };
  walk(join(root, 'apps'));
  walk(join(root, 'libs'));
  return names;
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/**
 * The metric names a PromQL expression selects: identifiers left once strings, label matchers,
 * range selectors and grouping clauses are removed, other than functions (followed by `(`) and keywords.
 */
function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/(?<![\w$.])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)]
    .map((m) => m[1])
    .filter((id) => !KEYWORDS.has(id) && !/^(inf|nan)$/i.test(id));
}

/** A histogram is exported as <name>_bucket, _sum and _count. */
function isDefined(metric: string, defined: Set<string>): boolean {
  return defined.has(metric) || defined.has(metric.replace(/_(bucket|sum|count)$/, ''));
}

const defined = definedMetrics();

describe('metricsIn', () => {
  it('finds the metrics of an expression, not its functions, labels, ranges or variables', () => {
    expect(
      metricsIn(
        'histogram_quantile(0.99, sum by (route, le) (rate(petstore_a_bucket{status=~"5..", x="y(z)"}[$__rate_interval]))) / on (job) group_left max(up) > 0.5',
      ),
    ).toEqual(['petstore_a_bucket', 'up']);
  });
});

describe('Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(join(observability, 'grafana', 'petstore-dashboard.json'), 'utf8'));
  const panels: any[] = dashboard.panels.flatMap((p: any) => [p, ...(p.panels ?? [])]);
  const charts = panels.filter((p) => p.type !== 'row');

  it('declares the metrics of the code (grepped from apps/ and libs/)', () => {
    expect(defined).toContain('petstore_http_request_duration_seconds');
    expect(defined).toContain('petstore_rate_limit_decisions_total');
    expect(defined).toContain('process_start_time_seconds');
  });

  it('gives every chart a query and every panel its own id', () => {
    expect(charts.length).toBeGreaterThan(0);
    for (const p of charts) expect(p.targets.map((t: any) => t.expr).every(Boolean)).toBe(true);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics the code exports', () => {
    const unknown = charts.flatMap((p) =>
      p.targets.flatMap((t: any) =>
        metricsIn(t.expr)
          .filter((m) => !isDefined(m, defined))
          .map((m) => `${p.title}: ${m}`),
      ),
    );
    expect(unknown).toEqual([]);
  });
});

describe('Prometheus alert rules', () => {
  const rules: any[] = parse(
    readFileSync(join(observability, 'prometheus', 'petstore-alerts.yaml'), 'utf8'),
  ).groups.flatMap((g: any) => g.rules);

  it('gives every alert a severity and a summary', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) {
      expect(r.alert).toMatch(/^Petstore[A-Z]\w+$/);
      expect(['page', 'warn', 'info']).toContain(r.labels.severity);
      expect(r.annotations.summary).toBeTruthy();
    }
  });

  it('alerts only on metrics the code exports', () => {
    const unknown = rules.flatMap((r) =>
      metricsIn(r.expr)
        .filter((m) => !isDefined(m, defined))
        .map((m) => `${r.alert}: ${m}`),
    );
    expect(unknown).toEqual([]);
  });
});
