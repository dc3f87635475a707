import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@app/config';
import { describeWith } from '../support/external-binary';

/**
 * docker-compose.yml's `observability` profile (Prometheus with our rules, Grafana with our
 * dashboard, an OpenTelemetry collector, Jaeger to view the traces) and its published ports, checked from the file: Docker
 * is not on CI's machine. Where `docker compose` exists, it checks the file as well.
 */
const root = join(__dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const services: Record<string, any> = compose.services;
const defaults = loadConfig({});
const PROFILED = ['grafana', 'jaeger', 'otel-collector', 'prometheus'];

/** `./host:/container[:ro]` bind mounts of a service (named volumes left out). */
function mounts(service: string): { host: string; container: string }[] {
  return (services[service].volumes ?? [])
    .map((v: string) => v.split(':'))
    .filter(([host]: string[]) => host.startsWith('./'))
    .map(([host, container]: string[]) => ({ host: join(root, host), container }));
}

/** The repository file mounted at `container` in `service` (the file itself, or inside a mounted folder). */
function mountedAt(service: string, container: string): string | undefined {
  for (const m of mounts(service)) {
    if (m.container === container) return m.host;
    if (container.startsWith(`${m.container}/`)) return join(m.host, container.slice(m.container.length + 1));
  }
  return undefined;
}

const published = (service: string) =>
  (services[service].ports ?? []).map((p: string) => {
    const m = /^(?:(127\.0\.0\.1):)?\$\{([A-Z_]+):-(\d+)\}:(\d+)$/.exec(p);
    return m ? { bind: m[1], variable: m[2], hostDefault: Number(m[3]), container: Number(m[4]) } : { raw: p };
  });

describe('docker-compose.yml: the observability profile', () => {
  it('starts Prometheus, Grafana, the collector and Jaeger only with the profile, and no default service needs them', () => {
    const inProfile = Object.keys(services).filter((s) => services[s].profiles?.includes('observability'));
    expect(inProfile.sort()).toEqual(PROFILED);
    for (const [name, service] of Object.entries(services)) {
      if (PROFILED.includes(name)) continue;
      expect(service.profiles).toBeUndefined();
      const needs = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
      for (const dependency of needs) expect(PROFILED).not.toContain(dependency);
    }
  });

  it('mounts only files and folders that exist in the repository', () => {
    const all = Object.keys(services).flatMap((s) => mounts(s).map((m) => m.host));
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect(all.filter((path) => !existsSync(path))).toEqual([]);
  });

  it('gives Prometheus our alert rules and both apps’ /metrics ports as targets', () => {
    const flag = services.prometheus.command.find((a: string) => a.startsWith('--config.file='));
    const configPath = flag.slice('--config.file='.length);
    const configFile = mountedAt('prometheus', configPath);
    expect(configFile).toBe(join(root, 'deploy/observability/prometheus/prometheus.yml'));
    const config = parse(readFileSync(configFile!, 'utf8'));
    const rules = config.rule_files.map((f: string) =>
      mountedAt('prometheus', posix.join(posix.dirname(configPath), f)),
    );
    expect(rules).toEqual([join(root, 'deploy/observability/prometheus/petstore-alerts.yaml')]);
    const targets = config.scrape_configs.flatMap((j: any) => j.static_configs.flatMap((c: any) => c.targets)).sort();
    const env = (name: string) => services[name].environment;
    expect(targets).toEqual([
      `api:${env('api').METRICS_PORT ?? defaults.metricsPort}`,
      `worker:${env('worker').WORKER_PORT ?? defaults.workerPort}`,
    ]);
  });

  it('provisions our dashboard in Grafana, with the profile’s Prometheus as its default data source', () => {
    const provisioning = mountedAt('grafana', '/etc/grafana/provisioning')!;
    const [provider] = parse(readFileSync(join(provisioning, 'dashboards', 'petstore.yaml'), 'utf8')).providers;
    expect(mountedAt('grafana', `${provider.options.path}/petstore-dashboard.json`)).toBe(
      join(root, 'deploy/observability/grafana/petstore-dashboard.json'),
    );
    const [source] = parse(readFileSync(join(provisioning, 'datasources', 'prometheus.yaml'), 'utf8')).datasources;
    expect(source).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true });
    const dashboard = JSON.parse(
      readFileSync(join(root, 'deploy/observability/grafana/petstore-dashboard.json'), 'utf8'),
    );
    expect(dashboard.templating.list.find((v: any) => v.name === 'datasource').query).toBe(source.type);
  });

  it('has the collector receive OTLP/HTTP traces at the URL the apps are told to export to', () => {
    const flag = services['otel-collector'].command.find((a: string) => a.startsWith('--config='));
    const config = parse(readFileSync(mountedAt('otel-collector', flag.slice('--config='.length))!, 'utf8'));
    expect(config.receivers.otlp.protocols.http.endpoint).toBe('0.0.0.0:4318');
    expect(config.service.pipelines.traces.receivers).toEqual(['otlp']);
    for (const app of ['api', 'worker'])
      expect(services[app].environment.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('${OTEL_EXPORTER_OTLP_ENDPOINT:-}');
    expect(readFileSync(join(root, 'docker-compose.yml'), 'utf8')).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318',
    );
  });
});

describe('docker-compose.yml: a trace viewer (Jaeger) wired to the collector', () => {
  const collector = () => {
    const flag = services['otel-collector'].command.find((a: string) => a.startsWith('--config='));
    return parse(readFileSync(mountedAt('otel-collector', flag.slice('--config='.length))!, 'utf8'));
  };

  it('the collector exports the traces pipeline over OTLP to Jaeger, and the debug line stays', () => {
    const config = collector();
    const exporters: string[] = config.service.pipelines.traces.exporters;
    expect(exporters).toContain('debug');
    const toJaeger = exporters.filter((e) => /^otlp(\/|$)/.test(e)).map((e) => config.exporters[e]);
    expect(toJaeger).toEqual([{ endpoint: 'jaeger:4317', tls: { insecure: true } }]);
    expect(services['otel-collector'].depends_on).toContain('jaeger');
  });

  it('Jaeger receives OTLP/gRPC from the other containers and serves its UI on loopback', () => {
    const jaeger = services.jaeger;
    expect(jaeger.image).toMatch(/^jaegertracing\/jaeger:2\.\d+\.\d+$/);
    // The receiver listens on localhost unless told otherwise: the collector would be refused.
    expect(jaeger.command).toEqual(
      expect.arrayContaining(['--set=receivers.otlp.protocols.grpc.endpoint=0.0.0.0:4317']),
    );
    expect(published('jaeger')).toEqual([
      { bind: '127.0.0.1', variable: 'JAEGER_UI_PORT', hostDefault: 16686, container: 16686 },
    ]);
  });

  it('Grafana has Jaeger as a data source (traces beside the dashboard)', () => {
    const provisioning = mountedAt('grafana', '/etc/grafana/provisioning')!;
    const [source] = parse(readFileSync(join(provisioning, 'datasources', 'jaeger.yaml'), 'utf8')).datasources;
    expect(source).toMatchObject({ type: 'jaeger', url: 'http://jaeger:16686' });
    expect(source.isDefault).not.toBe(true);
  });
});

describe('docker-compose.yml: published ports', () => {
  it('publishes every port on a host port set by a variable with a default', () => {
    const ports = Object.keys(services).flatMap((s) => published(s));
    expect(ports.length).toBeGreaterThanOrEqual(6);
    expect(ports.filter((p: any) => p.raw)).toEqual([]);
    const variables = ports.map((p: any) => p.variable);
    expect(new Set(variables).size).toBe(variables.length);
  });

  it('publishes the API’s port (API_PORT), and its metrics and the worker’s ops port on loopback only', () => {
    const env = (name: string) => services[name].environment;
    expect(published('api')).toEqual([
      { bind: undefined, variable: 'API_PORT', hostDefault: 3000, container: Number(env('api').PORT) },
      {
        bind: '127.0.0.1',
        variable: 'API_METRICS_PORT',
        hostDefault: 9464,
        container: Number(env('api').METRICS_PORT ?? defaults.metricsPort),
      },
    ]);
    expect(published('worker')).toEqual([
      {
        bind: '127.0.0.1',
        variable: 'WORKER_OPS_PORT',
        hostDefault: 3001,
        container: Number(env('worker').WORKER_PORT),
      },
    ]);
    for (const name of PROFILED) for (const p of published(name)) expect(p.bind).toBe('127.0.0.1');
  });
});

describeWith('promtool', 'apt-get install -y prometheus')('Prometheus configuration of the profile', () => {
  it('passes promtool check config, with the rule files it names', () => {
    const run = spawnSync('promtool', ['check', 'config', 'deploy/observability/prometheus/prometheus.yml'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});

// Docker is not on CI's machine: this runs wherever `docker compose` works, and is skipped elsewhere.
const hasCompose = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
(hasCompose ? describe : describe.skip)('docker compose config', () => {
  it.each([[[]], [['--profile', 'observability']]])('accepts the file (%j)', (profile: string[]) => {
    const run = spawnSync('docker', ['compose', ...profile, 'config', '--quiet'], { cwd: root, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
