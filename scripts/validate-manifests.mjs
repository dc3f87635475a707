// Renders deploy/k8s/base as `kubectl kustomize` would (for what it uses) and validates every object
// against the Kubernetes and KEDA schemas offline. No kubectl here: only npm and Debian packages.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as autoscaling from 'kubernetes-models/autoscaling/v2';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';

const base = join(dirname(fileURLToPath(import.meta.url)), '..', 'deploy', 'k8s', 'base');
const MODELS = {
  v1: core,
  'apps/v1': apps,
  'policy/v1': policy,
  'networking.k8s.io/v1': networking,
  'autoscaling/v2': autoscaling,
  'keda.sh/v1alpha1': keda,
};

export function render() {
  const kustomization = parse(readFileSync(join(base, 'kustomization.yaml'), 'utf8'));
  const labels = Object.assign({}, ...(kustomization.labels ?? []).map((l) => l.pairs));
  const tags = new Map((kustomization.images ?? []).map((i) => [i.name, i.newTag]));
  const retag = (c) => (tags.has(c.image) ? { ...c, image: `${c.image}:${tags.get(c.image)}` } : c);
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(base, file), 'utf8')).map((doc) => {
      const object = doc.toJSON();
      object.metadata.labels = { ...object.metadata.labels, ...labels };
      const pod = object.spec?.template?.spec;
      if (pod) {
        pod.containers = pod.containers.map(retag);
        if (pod.initContainers) pod.initContainers = pod.initContainers.map(retag);
      }
      return { file, object };
    }),
  );
}

const problems = [];
for (const { file, object } of render()) {
  const Model = MODELS[object.apiVersion]?.[object.kind];
  if (!Model) {
    problems.push(`${file}: no schema for ${object.apiVersion} ${object.kind}`);
    continue;
  }
  try {
    new Model(object).validate();
  } catch (err) {
    problems.push(`${file}: ${object.kind} ${object.metadata.name}: ${String(err.message).split('\n')[0]}`);
  }
}
for (const p of problems) process.stderr.write(`${p}\n`);
if (problems.length) process.exit(1);
process.stdout.write('manifests valid against the Kubernetes and KEDA schemas\n');
