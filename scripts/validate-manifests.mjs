// Renders deploy/k8s (the base and each overlay) as `kubectl kustomize` would, for the features they use,
// and validates every object against the Kubernetes, KEDA and Prometheus Operator schemas offline. No
// kubectl or kustomize here: only npm and Debian packages.
//   node scripts/validate-manifests.mjs               validate base, overlays/dev, overlays/prod
//   node scripts/validate-manifests.mjs --json <dir>  print <dir>'s rendered objects as JSON (for the tests)
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as autoscaling from 'kubernetes-models/autoscaling/v2';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as monitoring from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const k8s = join(root, 'deploy', 'k8s');
export const TARGETS = ['base', 'overlays/dev', 'overlays/prod'];
const MODELS = {
  v1: core,
  'apps/v1': apps,
  'policy/v1': policy,
  'networking.k8s.io/v1': networking,
  'autoscaling/v2': autoscaling,
  'keda.sh/v1alpha1': keda,
  'monitoring.coreos.com/v1': monitoring,
  'postgresql.cnpg.io/v1': { Cluster: cnpgCluster() },
};
// Fail on anything else rather than render it wrong.
const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels', 'images', 'patches']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

const documents = (file) =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length) throw new Error(`${relative(root, file)}: ${doc.errors[0].message}`);
    return doc.toJSON();
  });

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
// Built-in kinds merge lists of named items by name (containers, env, ports); custom resources replace lists.
const builtIn = (apiVersion) => !apiVersion.includes('.') || apiVersion.split('/')[0].endsWith('.k8s.io');

/** A strategic merge patch, for what the overlays patch: null deletes a field, named items merge by name. */
function merge(target, patch, byName) {
  const out = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isObject(value) && isObject(out[key])) out[key] = merge(out[key], value, byName);
    else if (byName && Array.isArray(value) && Array.isArray(out[key]) && value.every((v) => v?.name)) {
      const merged = out[key].map((item) => {
        const p = value.find((v) => v.name === item.name);
        return p ? merge(item, p, byName) : item;
      });
      out[key] = [...merged, ...value.filter((v) => !out[key].some((item) => item.name === v.name))];
    } else out[key] = value;
  }
  return out;
}

/** The objects `kubectl kustomize <dir>` would print, each with the file it came from. */
export function render(dir) {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
  const unknown = Object.keys(kustomization).filter((k) => !SUPPORTED.has(k));
  if (unknown.length) throw new Error(`${relative(root, dir)}: kustomization fields not rendered here: ${unknown}`);
  let objects = kustomization.resources.flatMap((entry) => {
    const path = join(dir, entry);
    return existsSync(join(path, 'kustomization.yaml'))
      ? render(path)
      : documents(path).map((object) => ({ file: relative(k8s, path), object }));
  });
  for (const { path } of kustomization.patches ?? []) {
    for (const patch of documents(join(dir, path))) {
      const i = objects.findIndex(
        ({ object }) => object.kind === patch.kind && object.metadata.name === patch.metadata.name,
      );
      if (i < 0) throw new Error(`${relative(root, dir)}/${path}: no ${patch.kind} ${patch.metadata.name} to patch`);
      objects[i] = { ...objects[i], object: merge(objects[i].object, patch, builtIn(patch.apiVersion)) };
    }
  }
  const labels = Object.assign({}, ...(kustomization.labels ?? []).map((l) => l.pairs));
  const images = new Map((kustomization.images ?? []).map((i) => [i.name, i]));
  const retag = (c) => {
    const [name] = c.image.split(/[:@]/);
    const image = images.get(name);
    if (!image) return c;
    return { ...c, image: image.digest ? `${name}@${image.digest}` : `${name}:${image.newTag}` };
  };
  objects = objects.map(({ file, object }) => {
    const o = structuredClone(object);
    o.metadata.labels = { ...o.metadata.labels, ...labels };
    if (kustomization.namespace && !CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = kustomization.namespace;
    const pod = o.spec?.template?.spec;
    if (pod) {
      pod.containers = pod.containers.map(retag);
      if (pod.initContainers) pod.initContainers = pod.initContainers.map(retag);
    }
    return { file, object: o };
  });
  return objects;
}

/**
 * CloudNativePG publishes no kubernetes-models package: its Cluster is checked against the fields the
 * overlays set (CRD postgresql.cnpg.io/v1 Cluster, operator 1.24+ for spec.postgresql.synchronous), and
 * anything else in spec is refused rather than passed unread.
 */
function cnpgCluster() {
  const SPEC = new Set(['instances', 'postgresql', 'bootstrap', 'storage', 'affinity']);
  const int = (v, min) => Number.isInteger(v) && v >= min;
  const str = (v) => typeof v === 'string' && v.length > 0;
  return class {
    constructor(object) {
      this.object = object;
    }
    validate() {
      const { metadata, spec } = this.object;
      const problems = [];
      if (!str(metadata?.name) || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(metadata.name))
        problems.push('metadata.name');
      for (const key of Object.keys(spec ?? {})) if (!SPEC.has(key)) problems.push(`spec.${key}: not checked here`);
      if (!int(spec?.instances, 1)) problems.push('spec.instances: an integer >= 1');
      const sync = spec?.postgresql?.synchronous;
      if (sync) {
        if (!['any', 'first'].includes(sync.method)) problems.push('spec.postgresql.synchronous.method: any or first');
        if (!int(sync.number, 1) || sync.number >= spec.instances)
          problems.push('spec.postgresql.synchronous.number: 1 to instances - 1');
        if (sync.dataDurability !== undefined && !['required', 'preferred'].includes(sync.dataDurability))
          problems.push('spec.postgresql.synchronous.dataDurability: required or preferred');
      }
      for (const [k, v] of Object.entries(spec?.postgresql?.parameters ?? {}))
        if (typeof v !== 'string') problems.push(`spec.postgresql.parameters.${k}: a string`);
      const initdb = spec?.bootstrap?.initdb;
      if (initdb && (!str(initdb.database) || !str(initdb.owner)))
        problems.push('spec.bootstrap.initdb: database and owner');
      if (!/^\d+(Mi|Gi|Ti)$/.test(String(spec?.storage?.size))) problems.push('spec.storage.size: a quantity');
      const affinity = spec?.affinity;
      if (affinity && !['required', 'preferred', undefined].includes(affinity.podAntiAffinityType))
        problems.push('spec.affinity.podAntiAffinityType: required or preferred');
      if (problems.length) throw new Error(problems.join('; '));
    }
  };
}

function validate(target) {
  const problems = [];
  const objects = render(join(k8s, target));
  for (const { file, object } of objects) {
    const Model = MODELS[object.apiVersion]?.[object.kind];
    if (!Model) {
      problems.push(`${target}: ${file}: no schema for ${object.apiVersion} ${object.kind}`);
      continue;
    }
    try {
      new Model(object).validate();
    } catch (err) {
      problems.push(
        `${target}: ${file}: ${object.kind} ${object.metadata.name}: ${String(err.message).split('\n')[0]}`,
      );
    }
  }
  return { count: objects.length, problems };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const json = process.argv.indexOf('--json');
  if (json >= 0) {
    process.stdout.write(JSON.stringify(render(join(k8s, process.argv[json + 1]))));
  } else {
    const results = TARGETS.map((t) => ({ target: t, ...validate(t) }));
    for (const p of results.flatMap((r) => r.problems)) process.stderr.write(`${p}\n`);
    if (results.some((r) => r.problems.length)) process.exit(1);
    const counts = results.map((r) => `${r.target} ${r.count}`).join(', ');
    process.stdout.write(`objects valid against the Kubernetes, KEDA and Prometheus Operator schemas: ${counts}\n`);
  }
}
