// `npm run lint:docs`: the figures the README and the pages it sends newcomers to state (operation count, API key
// lengths, ports), checked against the code; each finding is printed as file:line and what to change.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiKey, generateLegacyApiKey, KeyTags } from '@app/access';
import { loadConfig } from '@app/config';

export interface Finding {
  file: string;
  /** 1-based; absent when the sentence the check looks for is not there at all. */
  line?: number;
  message: string;
}

/** The README and the pages it sends newcomers to. */
export const DOCS_PAGES = ['README.md', 'docs/using-the-api.md', 'docs/internals/overview.md', 'docs/development.md'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Match {
  file: string;
  line: number;
  groups: string[];
}

class Pages {
  private readonly texts = new Map<string, string>();

  constructor(private readonly root: string) {}

  read(file: string): string {
    if (!this.texts.has(file)) this.texts.set(file, readFileSync(join(this.root, file), 'utf8'));
    return this.texts.get(file)!;
  }

  matches(file: string, pattern: RegExp): Match[] {
    const text = this.read(file);
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    return [...text.matchAll(global)].map((m) => ({
      file,
      line: text.slice(0, m.index).split('\n').length,
      groups: m.slice(1),
    }));
  }
}

const at = (m: Match, message: string): Finding => ({ file: m.file, line: m.line, message });

function operationCount(pages: Pages): Finding[] {
  const document = JSON.parse(pages.read('openapi.json')) as { paths: Record<string, Record<string, unknown>> };
  const count = Object.values(document.paths).flatMap((item) =>
    Object.keys(item).filter((k) => METHODS.includes(k)),
  ).length;
  const stated = DOCS_PAGES.flatMap((file) => pages.matches(file, /\b(\d+) operations\b/));
  const findings = stated
    .filter((m) => Number(m.groups[0]) !== count)
    .map((m) =>
      at(m, `says "${m.groups[0]} operations"; openapi.json has ${count} (get/put/post/delete/patch under paths)`),
    );
  if (stated.length < 3)
    findings.push({
      file: DOCS_PAGES.join(', '),
      message: `only ${stated.length} "<N> operations" sentences (at least 3 expected): one was reworded, so its count goes unchecked`,
    });
  return findings;
}

function keyLengths(pages: Pages): Finding[] {
  const tags = new KeyTags([{ id: 'k1', key: Buffer.alloc(32, 1) }]);
  const tagged = generateApiKey(tags).length;
  const legacy = generateLegacyApiKey().length;
  const findings: Finding[] = [];

  const [readme] = pages.matches('README.md', /API key \((\d+) characters/);
  if (!readme)
    findings.push({
      file: 'README.md',
      message: 'no "API key (<N> characters" sentence: the key length goes unchecked',
    });
  else if (Number(readme.groups[0]) !== tagged)
    findings.push(at(readme, `says an API key has ${readme.groups[0]} characters; generateApiKey makes ${tagged}`));

  const overview = 'docs/internals/overview.md';
  const [decision] = pages.matches(
    overview,
    /API keys\*\* are (\d+) characters: ([\s\S]+?)\(keys issued before tags:\s+(\d+) characters/,
  );
  if (!decision) {
    findings.push({
      file: overview,
      message:
        'no "API keys** are <N> characters: <parts> (keys issued before tags: <M> characters" sentence: key lengths go unchecked',
    });
    return findings;
  }
  const [stated, parts, statedLegacy] = decision.groups;
  if (Number(stated) !== tagged)
    findings.push(at(decision, `says API keys have ${stated} characters; generateApiKey makes ${tagged}`));
  if (Number(statedLegacy) !== legacy)
    findings.push(
      at(
        decision,
        `says keys issued before tags have ${statedLegacy} characters; generateLegacyApiKey makes ${legacy}`,
      ),
    );
  // `pst_` (4) and each "N-character" / "N base62 characters" part.
  const sum = 4 + [...parts.matchAll(/(\d+)(?:-character| base62 characters)/g)].reduce((n, m) => n + Number(m[1]), 0);
  if (sum !== Number(stated))
    findings.push(
      at(decision, `the parts it lists add up to ${sum} characters (pst_ included), not the ${stated} it states`),
    );
  return findings;
}

function ports(pages: Pages): Finding[] {
  const defaults = loadConfig({});
  const findings: Finding[] = [];
  const named = [
    { pattern: /API on :(\d+)/, port: defaults.port, setting: 'PORT' },
    { pattern: /worker on :(\d+)/, port: defaults.workerPort, setting: 'WORKER_PORT' },
    { pattern: /Prometheus metrics on :(\d+)/, port: defaults.metricsPort, setting: 'METRICS_PORT' },
  ];
  for (const { pattern, port, setting } of named) {
    const [m] = pages.matches('README.md', pattern);
    if (!m)
      findings.push({
        file: 'README.md',
        message: `no "${pattern.source.replace('(\\d+)', '<port>')}" sentence: the ${setting} default goes unchecked`,
      });
    else if (Number(m.groups[0]) !== port)
      findings.push(at(m, `says :${m.groups[0]}; the ${setting} default is ${port}`));
  }
  const urls = pages.matches('README.md', /localhost:(\d+)/);
  if (!urls.length)
    findings.push({ file: 'README.md', message: "no localhost:<port> URL: the examples' port goes unchecked" });
  for (const m of urls.filter((u) => Number(u.groups[0]) !== defaults.port))
    findings.push(
      at(m, `an example calls localhost:${m.groups[0]}; the API listens on the PORT default, ${defaults.port}`),
    );
  return findings;
}

export function lintDocs(root = join(__dirname, '..')): Finding[] {
  const pages = new Pages(root);
  return [operationCount, keyLengths, ports].flatMap((check) => check(pages));
}

export const formatFinding = (f: Finding) => `${f.file}${f.line ? `:${f.line}` : ''}: ${f.message}`;

function main(root?: string): void {
  const findings = lintDocs(root);
  for (const finding of findings) console.error(formatFinding(finding));
  if (findings.length) {
    console.error(`docs lint: ${findings.length} finding(s)`);
    process.exit(1);
  }
  console.log('docs lint: the figures in the README and its guides match the code');
}

if (require.main === module) main(process.argv[2]);
