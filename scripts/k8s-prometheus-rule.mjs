// Writes deploy/k8s/monitoring/prometheusrule.yaml, the Prometheus Operator's form of our alert rules, from
// deploy/observability/prometheus/petstore-alerts.yaml (the file promtool checks and tests). Run it after
// changing the rules: test/deploy/kubernetes-overlays.spec.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';

const rules = new URL('../deploy/observability/prometheus/petstore-alerts.yaml', import.meta.url);
const out = new URL('../deploy/k8s/monitoring/prometheusrule.yaml', import.meta.url);
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'petstore' },
  spec: { groups: parse(readFileSync(rules, 'utf8')).groups },
};
const header =
  '# Generated from deploy/observability/prometheus/petstore-alerts.yaml by `node scripts/k8s-prometheus-rule.mjs`:\n' +
  '# edit the rules there, then run it.\n';
writeFileSync(out, header + stringify(rule, { lineWidth: 0 }));
