import { execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '@app/config';
import { JobCatalog, queuePrefix } from '@app/jobs';
import { publicPathsOf } from '../../apps/api/src/policy/route-policy.decorator';
import { HealthController } from '../../apps/api/src/health/health.controller';
import { WORKER_FEATURES } from '../../apps/worker/src/worker.module';

/**
 * The Kubernetes manifests, docker-compose.yml and the Dockerfile must stay in step with the
 * code: entry points that the build produces, variables the config understands, probe paths
 * and ports the apps serve, queue lists BullMQ really uses.
 */
const root = join(__dirname, '..', '..');
const execFileAsync = promisify(execFile);
const base = join(root, 'deploy', 'k8s', 'base');
const defaults = loadConfig({});
const nestCli = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8'));
const applications = Object.entries(nestCli.projects as Record<string, { type: string }>)
  .filter(([, p]) => p.type === 'application')
  .map(([name]) => name);
// tsc keeps the source tree under dist/: apps/<app>/src/main.ts becomes dist/apps/<app>/src/main.js.
const builtEntryPoints = applications.map((name) => `dist/apps/${name}/src/main.js`);
/** The API's public routes (no key, no limit); the worker's ops server answers the same paths. */
const PROBE_PATHS = publicPathsOf([HealthController]).map((path) => `/${path}`);

function docs(file: string): any[] {
  return parseAllDocuments(readFileSync(file, 'utf8'), { merge: true }).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJSON();
  });
}

const manifests = readdirSync(base)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .flatMap((f) => docs(join(base, f)).map((doc) => ({ file: f, doc })));

function containers(init = false): { file: string; c: any }[] {
  return manifests.flatMap(({ file, doc }) => {
    const spec = doc.kind === 'Deployment' || doc.kind === 'Job' ? doc.spec.template.spec : undefined;
    return [...(spec?.containers ?? []), ...(init ? (spec?.initContainers ?? []) : [])].map((c: any) => ({ file, c }));
  });
}

const ofKind = (kind: string) => manifests.filter(({ doc }) => doc.kind === kind).map(({ doc }) => doc);
const configMap = () => ofKind('ConfigMap')[0];

describe('Kubernetes manifests', () => {
  it('lists every manifest in the kustomization, and only existing ones', () => {
    const [k] = docs(join(base, 'kustomization.yaml'));
    const files = readdirSync(base).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...k.resources].sort()).toEqual(files.sort());
  });

  it('runs entry points the build produces', () => {
    const found = containers();
    expect(found.length).toBeGreaterThanOrEqual(3);
    for (const { c } of found) expect(builtEntryPoints).toContain(c.command[1]);
  });

  it('sets only variables the config understands, with DATABASE_URL and REDIS_URL from the secret', () => {
    const config = manifests.find(({ doc }) => doc.kind === 'ConfigMap')?.doc;
    for (const name of Object.keys(config.data)) expect(CONFIG_VARIABLES).toContain(name);
    for (const { c } of containers(true)) {
      const names = (c.env ?? []).map((e: any) => e.name);
      for (const name of names) expect(CONFIG_VARIABLES).toContain(name);
      for (const secret of ['DATABASE_URL', 'REDIS_URL']) {
        const entry = c.env.find((e: any) => e.name === secret);
        expect(entry.valueFrom.secretKeyRef).toEqual({ name: 'petstore-secrets', key: secret });
      }
    }
  });

  it('probes the health routes on the apps’ ops ports (the API’s METRICS_PORT, not its public PORT)', () => {
    const config = manifests.find(({ doc }) => doc.kind === 'ConfigMap')?.doc;
    const expectedPort: Record<string, number> = {
      'dist/apps/api/src/main.js': Number(config.data.METRICS_PORT ?? defaults.metricsPort),
      'dist/apps/worker/src/main.js': Number(config.data.WORKER_PORT ?? defaults.workerPort),
    };
    let probed = 0;
    for (const { c } of containers()) {
      const port = expectedPort[c.command[1]];
      if (port === undefined) continue;
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        const get = c[probe].httpGet;
        if (c.startupProbe) expect(c.startupProbe.httpGet.port).toBe(get.port);
        expect(PROBE_PATHS).toContain(get.path);
        const named = c.ports.find((p: any) => p.name === get.port);
        expect(named.containerPort).toBe(port);
        probed++;
      }
    }
    expect(probed).toBe(6);
    expect(readFileSync(join(root, 'apps/worker/src/ops/ops-server.service.ts'), 'utf8')).toContain("'/health/ready'");
    expect(readFileSync(join(root, 'apps/api/src/metrics/metrics-server.service.ts'), 'utf8')).toContain(
      "'/health/ready'",
    );
  });

  it('runs one worker Deployment per queue group, each queue in one group, scaled on its own queues’ wait lists', () => {
    const groups = ofKind('Deployment')
      .filter((d) => d.spec.template.spec.containers[0].command[1] === 'dist/apps/worker/src/main.js')
      .map((d) => ({
        name: d.metadata.name,
        queues: d.spec.template.spec.containers[0].env.find((e: any) => e.name === 'WORKER_QUEUES').value.split(','),
      }));
    expect(groups.length).toBeGreaterThanOrEqual(2);
    expect(groups.flatMap((g) => g.queues).sort()).toEqual(new JobCatalog(WORKER_FEATURES).queues.sort());
    for (const g of groups) {
      const scaled = ofKind('ScaledObject').find((o) => o.spec.scaleTargetRef.name === g.name);
      const lists = scaled.spec.triggers.map((t: any) => t.metadata.listName).sort();
      const namespace = configMap().data.REDIS_NAMESPACE;
      expect(lists).toEqual(g.queues.map((q: string) => `${queuePrefix(namespace, q)}:${q}:wait`).sort());
      for (const t of scaled.spec.triggers) {
        expect(t.authenticationRef.name).toBe('petstore-redis');
        expect(Object.keys(t.metadata)).toEqual(expect.arrayContaining(['databaseIndex', 'enableTLS']));
      }
    }
    const auth = ofKind('TriggerAuthentication')[0];
    expect(auth.spec.secretTargetRef.map((r: any) => r.parameter).sort()).toEqual(['address', 'password']);
  });

  it('leaves the replica count to the autoscalers, and gives each Deployment a PodDisruptionBudget', () => {
    const deployments = ofKind('Deployment');
    const scaled = [
      ...ofKind('HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name),
      ...ofKind('ScaledObject').map((o) => o.spec.scaleTargetRef.name),
    ];
    for (const d of deployments) {
      expect(scaled).toContain(d.metadata.name);
      expect(d.spec.replicas).toBeUndefined();
      const pdb = ofKind('PodDisruptionBudget').find(
        (p) =>
          p.spec.selector.matchLabels['app.kubernetes.io/name'] ===
          d.spec.selector.matchLabels['app.kubernetes.io/name'],
      );
      expect(pdb).toBeDefined();
    }
  });

  it('migrates in an init container of every Deployment, not in a Job that cannot be re-applied', () => {
    expect(ofKind('Job')).toEqual([]);
    for (const d of ofKind('Deployment'))
      expect(d.spec.template.spec.initContainers.map((c: any) => c.command)).toEqual([
        ['node', 'dist/apps/cli/src/main.js', 'migrate'],
      ]);
  });

  it('meets the restricted Pod Security Standard', () => {
    for (const d of ofKind('Deployment')) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      for (const c of [...pod.containers, ...pod.initContainers])
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          readOnlyRootFilesystem: true,
        });
    }
  });

  it('renders and validates against the Kubernetes and KEDA schemas, offline (scripts/validate-manifests.mjs)', () => {
    const run = spawnSync(process.execPath, [join(root, 'scripts', 'validate-manifests.mjs')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('keeps /metrics off the public Service: the API scrapes on METRICS_PORT, which the Service does not expose', () => {
    const config = configMap();
    const api = ofKind('Deployment').find((d) => d.metadata.name === 'petstore-api');
    const metricsPort = Number(config.data.METRICS_PORT ?? defaults.metricsPort);
    expect(api.spec.template.metadata.annotations['prometheus.io/port']).toBe(String(metricsPort));
    expect(api.spec.template.spec.containers[0].ports.map((p: any) => p.containerPort)).toContain(metricsPort);
    const service = ofKind('Service')[0];
    expect(service.spec.ports.map((p: any) => p.targetPort)).toEqual(['http']);
  });

  it('routes the Ingress to the API Service, and the API trusts exactly its one hop for X-Forwarded-For', () => {
    const [ingress] = ofKind('Ingress');
    const service = ofKind('Service').find((s) => s.metadata.name === 'petstore-api');
    const backends = ingress.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.backend.service));
    expect(backends).toEqual([{ name: service.metadata.name, port: { name: service.spec.ports[0].name } }]);
    expect(loadConfig({ TRUST_PROXY: configMap().data.TRUST_PROXY }).trustProxy).toBe(1);
  });

  it('fits the connection budget at the autoscalers’ maximum replica counts', () => {
    const config = configMap();
    const poolOf = (d: any) =>
      d.spec.template.spec.containers[0].command[1] === 'dist/apps/api/src/main.js'
        ? Number(config.data.DATABASE_POOL_SIZE ?? defaults.databasePoolSize)
        : Number(config.data.WORKER_DATABASE_POOL_SIZE ?? defaults.workerDatabasePoolSize);
    const maxOf = (name: string) =>
      ofKind('HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === name)?.spec.maxReplicas ??
      ofKind('ScaledObject').find((o) => o.spec.scaleTargetRef.name === name).spec.maxReplicaCount;
    const deployments = ofKind('Deployment');
    // Each pod's init container holds one connection while it migrates.
    const total = deployments.reduce((sum, d) => sum + maxOf(d.metadata.name) * poolOf(d), 0) + deployments.length;
    // Postgres's default max_connections (100) less its 3 superuser slots.
    expect(total).toBeLessThanOrEqual(97);
  });
});

describe('docker-compose.yml and Dockerfile', () => {
  const [compose] = docs(join(root, 'docker-compose.yml'));

  it('runs postgres, redis, a one-shot migrate, the API and the worker, with health-gated start-up', () => {
    const byDefault = Object.keys(compose.services).filter((s) => !compose.services[s].profiles);
    expect(byDefault.sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
    expect(compose.services.api.depends_on.migrate.condition).toBe('service_completed_successfully');
    expect(compose.services.worker.depends_on.migrate.condition).toBe('service_completed_successfully');
    expect(compose.services.migrate.depends_on.postgres.condition).toBe('service_healthy');
    expect(compose.services.redis.command).toEqual(expect.arrayContaining(['--maxmemory-policy', 'noeviction']));
  });

  it('uses built entry points, known variables and the health routes', () => {
    for (const name of ['api', 'worker', 'migrate']) {
      const svc = compose.services[name];
      for (const v of Object.keys(svc.environment)) expect(CONFIG_VARIABLES).toContain(v);
      const command = svc.command.join(' ');
      const used = builtEntryPoints.filter((e) => command.includes(e));
      expect(used.length).toBeGreaterThan(0);
    }
    expect(compose.services.api.healthcheck.test.join(' ')).toContain(
      `:${compose.services.api.environment.PORT}/health/ready`,
    );
    expect(compose.services.worker.healthcheck.test.join(' ')).toContain(
      `:${compose.services.worker.environment.WORKER_PORT}/health/ready`,
    );
  });

  it('builds with the npm build script and starts a built entry point', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('RUN npm run build');
    const cmd = /^CMD \[(.*)\]$/m.exec(dockerfile)?.[1] ?? '';
    expect(builtEntryPoints.some((e) => cmd.includes(e))).toBe(true);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const built = /\bnest build ([\w ]+?)(?: &&|$)/.exec(pkg.scripts.build)?.[1].split(' ');
    expect(built?.sort()).toEqual([...applications].sort());
  });

  it('builds with tsc, not the deprecated webpack builder, each app under dist/apps/<app>/src', () => {
    expect(nestCli.compilerOptions.builder).toBe('tsc');
    expect(nestCli.compilerOptions.webpack).toBeUndefined();
    for (const app of applications) {
      const tsconfig = JSON.parse(readFileSync(join(root, nestCli.projects[app].compilerOptions.tsConfigPath), 'utf8'));
      expect(join(root, 'apps', app, tsconfig.compilerOptions.outDir)).toBe(join(root, 'dist'));
    }
  });

  it('builds and runs on one Node LTS image that package.json engines allow', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(new Set(images)).toEqual(new Set(['node:24-bookworm-slim']));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toMatch(/>=24(\s|$)/);
  });

  it('runs every app with package.json config.nodeOptions, from the image and from the npm scripts', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(/^ENV NODE_OPTIONS="(.*)"$/m.exec(runtime)?.[1]).toBe(pkg.config.nodeOptions);
    for (const app of ['api', 'worker']) {
      expect(pkg.scripts[`start:${app}`]).toBe(`node $npm_package_config_nodeOptions dist/apps/${app}/src/main.js`);
    }
  });

  it('bounds the young generation with those options: 16 MB semi-spaces, whatever the host’s memory', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const allocate = `let keep = []; for (let i = 0; i < 2e6; i++) { keep.push({ i }); if (keep.length > 5e4) keep = []; }
      console.log(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)`;
    const run = spawnSync(process.execPath, [...pkg.config.nodeOptions.split(' '), '-e', allocate], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(Number(run.stdout)).toBeLessThanOrEqual(2 * 16 * 2 ** 20 + 2 ** 20);
  });

  it('installs the runtime from a stage that leaves dev tooling out', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const stage = /^COPY --from=(\S+) \S*node_modules /m.exec(runtime)?.[1];
    const install = new RegExp(`^FROM \\S+ AS ${stage}\n(?:(?!FROM ).*\n)*?RUN (npm ci .*)$`, 'm').exec(
      dockerfile,
    )?.[1];
    expect(install).toMatch(/^npm ci --omit=dev --legacy-peer-deps /);
  });

  it('checks the liveness of whichever app the container runs, with node alone (slim images have no curl)', async () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const [node, flag, script] = JSON.parse(/^HEALTHCHECK .* CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect([node, flag]).toEqual(['node', '-e']);
    expect(PROBE_PATHS).toContain('/health/live');
    const server = createServer((req, res) => res.writeHead(req.url === '/health/live' ? 200 : 404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const live = String((server.address() as AddressInfo).port);
    const exitCode = (env: Record<string, string>) =>
      execFileAsync(process.execPath, ['-e', script], { env: { PATH: process.env.PATH, ...env } }).then(
        () => 0,
        (err: { code: number }) => err.code,
      );
    try {
      expect(await exitCode({ PORT: live, WORKER_PORT: '1' })).toBe(0);
      expect(await exitCode({ PORT: '1', WORKER_PORT: live })).toBe(0);
      expect(await exitCode({ PORT: '1', WORKER_PORT: '1' })).toBe(1);
    } finally {
      server.close();
    }
  });
});
