import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@app/config';

/**
 * deploy/k8s/overlays/{dev,prod} rendered as kustomize would (scripts/validate-manifests.mjs, which
 * also validates them against the schemas): what each sets over the base, the NetworkPolicy, and the
 * Prometheus Operator's resources in prod.
 */
const root = join(__dirname, '..', '..');
const defaults = loadConfig({});
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function render(target: string): any[] {
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'validate-manifests.mjs'), '--json', target], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return (JSON.parse(run.stdout) as { object: any }[]).map((r) => r.object);
}

const rendered: Record<string, any[]> = Object.fromEntries(
  ['base', 'overlays/dev', 'overlays/prod'].map((t) => [t, render(t)]),
);
const OVERLAYS = ['overlays/dev', 'overlays/prod'];
const ofKind = (objects: any[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: any[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const pod = (d: any) => d.spec.template.spec;
const isApi = (d: any) => pod(d).containers[0].command.includes('dist/apps/api/src/main.js');
const configOf = (objects: any[]) => named(objects, 'ConfigMap', 'petstore-config').data;

/** The autoscaler's [min, max] for a Deployment: an HPA's replicas or a ScaledObject's counts. */
function scale(objects: any[], name: string): [number, number] {
  const hpa = ofKind(objects, 'HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === name);
  if (hpa) return [hpa.spec.minReplicas ?? 1, hpa.spec.maxReplicas];
  const so = ofKind(objects, 'ScaledObject').find((o) => o.spec.scaleTargetRef.name === name);
  return [so.spec.minReplicaCount ?? 0, so.spec.maxReplicaCount ?? 100];
}

const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Quantities as the overlays write them: 250m, 1, 128Mi, 1Gi. */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Mi|Gi)?$/.exec(String(q));
  if (!m) throw new Error(`unexpected quantity ${q}`);
  return Number(m[1]) * ({ m: 1e-3, Mi: 2 ** 20, Gi: 2 ** 30 }[m[2] as 'm' | 'Mi' | 'Gi'] ?? 1);
}

describe.each(OVERLAYS)('Kubernetes overlay %s', (target) => {
  const objects = rendered[target];
  const deployments = ofKind(objects, 'Deployment');

  it('keeps every base object and the apps’ commands and probes (patches merge, they do not replace)', () => {
    const key = (o: any) => `${o.kind}/${o.metadata.name}`;
    expect(objects.map(key)).toEqual(expect.arrayContaining(rendered.base.map(key)));
    for (const d of deployments) {
      const base = named(rendered.base, 'Deployment', d.metadata.name);
      for (const [i, c] of pod(d).containers.entries()) {
        const b = pod(base).containers[i];
        // prod takes DATABASE_URL from its CloudNativePG Cluster (checked below); every other variable is the base's.
        const env = (e: any[]) => e.filter((v) => target !== 'overlays/prod' || v.name !== 'DATABASE_URL');
        expect([c.name, c.command, c.readinessProbe, env(c.env)]).toEqual([
          b.name,
          b.command,
          b.readinessProbe,
          env(b.env),
        ]);
      }
    }
  });

  it('puts every object in its own namespace', () => {
    const namespaces = new Set(objects.map((o) => o.metadata.namespace));
    expect(namespaces.size).toBe(1);
    expect([...namespaces][0]).toMatch(/^petstore(-\w+)?$/);
  });

  it('names an image tag, never `latest` (prod: the release, package.json’s version)', () => {
    const images = deployments.flatMap((d) => [...pod(d).containers, ...pod(d).initContainers].map((c) => c.image));
    const tags = new Set(images.map((i: string) => /^petstore:([\w.-]+)$/.exec(i)?.[1]));
    expect(tags.size).toBe(1);
    const [tag] = tags;
    expect(tag).toBeDefined();
    expect(tag).not.toBe('latest');
    if (target === 'overlays/prod') expect(tag).toBe(pkg.version);
  });

  it('requests CPU and memory for every container and caps its memory above the request', () => {
    for (const d of deployments)
      for (const c of [...pod(d).containers, ...pod(d).initContainers]) {
        const { requests, limits } = c.resources;
        expect(quantity(requests.cpu)).toBeGreaterThan(0);
        expect(quantity(limits.memory)).toBeGreaterThanOrEqual(quantity(requests.memory));
      }
  });

  it('autoscales every Deployment, with a PodDisruptionBudget that still lets a drain evict one pod at the minimum', () => {
    for (const d of deployments) {
      expect(d.spec.replicas).toBeUndefined();
      const [min, max] = scale(objects, d.metadata.name);
      expect(max).toBeGreaterThanOrEqual(Math.max(min, 1));
      const pdb = ofKind(objects, 'PodDisruptionBudget').find((p) =>
        selects(p.spec.selector.matchLabels, d.spec.template.metadata.labels),
      );
      const allowed =
        pdb.spec.maxUnavailable !== undefined ? pdb.spec.maxUnavailable : Math.max(min, 1) - pdb.spec.minAvailable;
      expect(allowed).toBeGreaterThanOrEqual(1);
    }
  });

  it('fits the connection budget at the autoscalers’ maxima', () => {
    const config = configOf(objects);
    const pool = (d: any) =>
      isApi(d)
        ? Number(config.DATABASE_POOL_SIZE ?? defaults.databasePoolSize)
        : Number(config.WORKER_DATABASE_POOL_SIZE ?? defaults.workerDatabasePoolSize);
    // Each pod's migrate init container holds one connection while it runs.
    const total = deployments.reduce((sum, d) => sum + scale(objects, d.metadata.name)[1] * pool(d), 0);
    expect(total + deployments.length).toBeLessThanOrEqual(97);
  });

  it('admits traffic to every pod by NetworkPolicy only: the API’s public port from the ingress controller, ops ports from monitoring', () => {
    const policies = ofKind(objects, 'NetworkPolicy');
    for (const d of deployments) {
      const labels = d.spec.template.metadata.labels;
      const mine = policies.filter((p) => selects(p.spec.podSelector.matchLabels, labels));
      expect(mine.length).toBeGreaterThan(0);
      const ports = new Map<string, number>(
        pod(d).containers.flatMap((c: any) => c.ports.map((p: any) => [p.name, p.containerPort])),
      );
      const opsPort = isApi(d) ? defaults.metricsPort : defaults.workerPort;
      const allowed = mine.flatMap((p) => {
        expect(p.spec.policyTypes).toContain('Ingress');
        return p.spec.ingress.flatMap((rule: any) =>
          rule.ports.map((port: any) => ({
            port: ports.get(port.port),
            from: rule.from.map((f: any) => f.namespaceSelector.matchLabels['kubernetes.io/metadata.name']),
          })),
        );
      });
      // Every port a policy names is one the pod listens on.
      for (const a of allowed) expect(a.port).toBeDefined();
      const expected = [{ port: opsPort, from: ['monitoring'] }];
      if (isApi(d)) expected.push({ port: Number(configOf(objects).PORT ?? defaults.port), from: ['ingress-nginx'] });
      expect(allowed).toEqual(expect.arrayContaining(expected));
      expect(allowed).toHaveLength(expected.length);
    }
  });

  it('lets the API open connections only to DNS, Postgres, Redis and the trace collector; workers anywhere (webhooks)', () => {
    const policies = ofKind(objects, 'NetworkPolicy');
    for (const d of deployments) {
      const mine = policies.filter((p) => selects(p.spec.podSelector.matchLabels, d.spec.template.metadata.labels));
      const egress = mine.filter((p) => p.spec.policyTypes.includes('Egress'));
      if (!isApi(d)) {
        // A webhook URL may be any public address: the SSRF guard, not the network, refuses private ones.
        expect(egress).toEqual([]);
        continue;
      }
      expect(egress.length).toBeGreaterThan(0);
      const rules = egress.flatMap((p) => p.spec.egress);
      const allowed = rules.flatMap((rule: any) =>
        rule.ports.map((port: any) => `${port.protocol ?? 'TCP'}/${port.port}`),
      );
      const postgres = new URL(defaults.databaseUrl).port || '5432';
      const redis = new URL(defaults.redisUrl).port || '6379';
      // OTLP/HTTP's registered port, where OTEL_EXPORTER_OTLP_ENDPOINT points in-cluster.
      expect(allowed.sort()).toEqual(['TCP/4318', `TCP/${postgres}`, `TCP/${redis}`, 'TCP/53', 'UDP/53'].sort());
      // Every rule names its ports; DNS goes to the cluster's resolver only.
      for (const rule of rules) expect(rule.ports.length).toBeGreaterThan(0);
      const dns = rules.filter((rule: any) => rule.ports.some((port: any) => port.port === 53));
      expect(dns.map((rule: any) => rule.to)).toEqual([
        [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
            podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
          },
        ],
      ]);
    }
  });
});

describe('Kubernetes overlay overlays/prod: Prometheus Operator', () => {
  const objects = rendered['overlays/prod'];

  it('scrapes every Deployment’s metrics port through a ServiceMonitor', () => {
    const [monitor] = ofKind(objects, 'ServiceMonitor');
    const services = ofKind(objects, 'Service').filter((s) =>
      selects(monitor.spec.selector.matchLabels, s.metadata.labels),
    );
    expect(services.length).toBeGreaterThan(0);
    for (const d of ofKind(objects, 'Deployment')) {
      const service = services.find((s) => selects(s.spec.selector, d.spec.template.metadata.labels));
      expect(service).toBeDefined();
      for (const endpoint of monitor.spec.endpoints) {
        expect(endpoint.path).toBe('/metrics');
        const port = service.spec.ports.find((p: any) => p.name === endpoint.port);
        const target = pod(d).containers[0].ports.find((p: any) => p.name === port.targetPort);
        expect(target.containerPort).toBe(isApi(d) ? defaults.metricsPort : defaults.workerPort);
      }
    }
    // The public Service still does not expose /metrics.
    expect(named(objects, 'Service', 'petstore-api').spec.ports.map((p: any) => p.targetPort)).toEqual(['http']);
  });

  it('alerts with a PrometheusRule equal to deploy/observability’s rules (regenerate: node scripts/k8s-prometheus-rule.mjs)', () => {
    const [rule] = ofKind(objects, 'PrometheusRule');
    const rules = parse(readFileSync(join(root, 'deploy/observability/prometheus/petstore-alerts.yaml'), 'utf8'));
    expect(rule.spec.groups).toEqual(rules.groups);
  });

  it('leaves the Prometheus Operator out of dev, whose cluster may not have its CRDs', () => {
    expect(rendered['overlays/dev'].filter((o) => o.apiVersion.startsWith('monitoring.coreos.com/'))).toEqual([]);
  });
});

describe('Kubernetes overlay overlays/prod: CloudNativePG', () => {
  const objects = rendered['overlays/prod'];
  const cluster = named(objects, 'Cluster', 'petstore-db');

  it('runs Postgres as a CloudNativePG Cluster of 3 instances with a synchronous standby', () => {
    expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
    expect(cluster.spec.instances).toBe(3);
    expect(cluster.spec.postgresql.synchronous).toMatchObject({ method: 'any', number: 1, dataDurability: 'required' });
    // Room for every pool at the autoscalers' maxima (the connection budget above counts the same pools).
    expect(Number(cluster.spec.postgresql.parameters.max_connections)).toBeGreaterThan(100);
  });

  it("points every process, the migrate step included, at the Cluster's -rw Service (the operator's app Secret)", () => {
    for (const d of ofKind(objects, 'Deployment')) {
      for (const c of [...(pod(d).initContainers ?? []), ...pod(d).containers]) {
        const env = c.env.find((e: any) => e.name === 'DATABASE_URL');
        // The Secret CloudNativePG writes: its `uri` names <cluster>-rw, the Service that follows the primary.
        expect(env.valueFrom.secretKeyRef).toEqual({ name: `${cluster.metadata.name}-app`, key: 'uri' });
      }
    }
  });

  it('leaves the operator out of dev', () => {
    expect(rendered['overlays/dev'].filter((o) => o.apiVersion.startsWith('postgresql.cnpg.io/'))).toEqual([]);
  });
});
