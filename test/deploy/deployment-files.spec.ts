import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '@app/config';
import { QueueName } from '@app/jobs';
import { PUBLIC_PATHS } from '../../apps/api/src/configure-app';

/**
 * The Kubernetes manifests, docker-compose.yml and the Dockerfile must stay in step with the
 * code: entry points that the build produces, variables the config understands, probe paths
 * and ports the apps serve, queue lists BullMQ really uses.
 */
const root = join(__dirname, '..', '..');
const base = join(root, 'deploy', 'k8s', 'base');
const defaults = loadConfig({});
const nestCli = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8'));
const builtEntryPoints = Object.entries(nestCli.projects as Record<string, { type: string }>)
  .filter(([, p]) => p.type === 'application')
  .map(([name]) => `dist/apps/${name}/main.js`);
const PROBE_PATHS = ['/health/live', '/health/ready'];

function docs(file: string): any[] {
  return parseAllDocuments(readFileSync(file, 'utf8'), { merge: true }).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJSON();
  });
}

const manifests = readdirSync(base)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .flatMap((f) => docs(join(base, f)).map((doc) => ({ file: f, doc })));

function containers(): { file: string; c: any }[] {
  return manifests.flatMap(({ file, doc }) => {
    const spec = doc.kind === 'Deployment' || doc.kind === 'Job' ? doc.spec.template.spec : undefined;
    return (spec?.containers ?? []).map((c: any) => ({ file, c }));
  });
}

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
    for (const { c } of containers()) {
      const names = (c.env ?? []).map((e: any) => e.name);
      for (const name of names) expect(CONFIG_VARIABLES).toContain(name);
      for (const secret of ['DATABASE_URL', 'REDIS_URL']) {
        const entry = c.env.find((e: any) => e.name === secret);
        expect(entry.valueFrom.secretKeyRef).toEqual({ name: 'petstore-secrets', key: secret });
      }
    }
  });

  it('probes the health routes on the ports the apps listen on', () => {
    const config = manifests.find(({ doc }) => doc.kind === 'ConfigMap')?.doc;
    const expectedPort: Record<string, number> = {
      'dist/apps/api/main.js': Number(config.data.PORT ?? defaults.port),
      'dist/apps/worker/main.js': Number(config.data.WORKER_PORT ?? defaults.workerPort),
    };
    let probed = 0;
    for (const { c } of containers()) {
      const port = expectedPort[c.command[1]];
      if (port === undefined) continue;
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        const get = c[probe].httpGet;
        expect(PROBE_PATHS).toContain(get.path);
        expect(PUBLIC_PATHS.test(get.path)).toBe(true);
        const named = c.ports.find((p: any) => p.name === get.port);
        expect(named.containerPort).toBe(port);
        probed++;
      }
    }
    expect(probed).toBe(4);
    expect(readFileSync(join(root, 'apps/worker/src/ops/ops-server.service.ts'), 'utf8')).toContain("'/health/ready'");
  });

  it('scales the worker on the wait lists of the real BullMQ queues', () => {
    const scaled = manifests.find(({ doc }) => doc.kind === 'ScaledObject')?.doc;
    const lists = scaled.spec.triggers.map((t: any) => t.metadata.listName).sort();
    expect(lists).toEqual(
      Object.values(QueueName)
        .map((q) => `petstore:${q}:wait`)
        .sort(),
    );
    expect(readFileSync(join(root, 'libs/jobs/src/jobs.module.ts'), 'utf8')).toContain("prefix: 'petstore'");
  });

  it('has an HPA, PodDisruptionBudgets and a migration Job', () => {
    const kinds = manifests.map(({ doc }) => doc.kind);
    expect(kinds).toEqual(expect.arrayContaining(['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Job', 'Service']));
    const job = manifests.find(({ doc }) => doc.kind === 'Job')?.doc;
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/apps/cli/main.js', 'migrate']);
  });
});

describe('docker-compose.yml and Dockerfile', () => {
  const [compose] = docs(join(root, 'docker-compose.yml'));

  it('runs postgres, redis, a one-shot migrate, the API and the worker, with health-gated start-up', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
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
    for (const app of ['api', 'worker', 'cli']) expect(pkg.scripts.build).toContain(`nest build ${app}`);
  });

  it('builds and runs on one Node LTS image that package.json engines allow', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(images).toEqual(['node:22-bookworm-slim', 'node:22-bookworm-slim']);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toMatch(/>=22(\s|$)/);
  });
});
