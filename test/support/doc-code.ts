import ts from 'typescript';

export interface DocBlock {
  /** The `## ` heading the block sits under, with its place there when it is not the first. */
  name: string;
  code: string;
}

/** The fenced TypeScript blocks of a Markdown document, in order. */
export function typescriptBlocks(markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const perHeading = new Map<string, number>();
  let heading = '';
  for (const [, title, code] of markdown.matchAll(/^## (.+)$|^```ts\n([\s\S]*?)^```$/gm)) {
    if (title !== undefined) {
      heading = title;
      continue;
    }
    const place = (perHeading.get(heading) ?? 0) + 1;
    perHeading.set(heading, place);
    blocks.push({ name: place === 1 ? heading : `${heading} (${place})`, code });
  }
  return blocks;
}

/** A document's TypeScript as CommonJS to run with `new Function` (types dropped, not checked). */
export function transpileDocCode(code: string): string {
  return ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  }).outputText;
}

/** A fenced block of a Markdown document that is an example to run: shell (with curl) or TypeScript. */
export interface DocExample {
  kind: 'shell' | 'typescript';
  /** The line of the opening fence (1-based). */
  line: number;
  /** The nearest heading above it, any level. */
  heading: string;
  /** The reason given by `<!-- not-run: reason -->` on the line before the fence (blank lines between allowed). */
  notRun?: string;
  code: string;
  /** Each shell command (continued lines joined as written) with its first line; comments and blank lines left out. */
  commands: { line: number; text: string }[];
}

const SHELL = new Set(['bash', 'sh', 'shell', 'console', 'zsh']);
const TYPESCRIPT = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs', 'cjs']);

/**
 * The examples of a Markdown document, in order: fenced blocks in a shell language or holding a line that
 * starts with `curl`, and TypeScript or JavaScript blocks. Other blocks (json, http, text, plans...) illustrate
 * and are not returned.
 */
export function docExamples(markdown: string): DocExample[] {
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  let heading = '';
  let lastText = '';
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(lines[i]);
    if (!fence) {
      const title = /^#{1,6} (.+)$/.exec(lines[i]);
      if (title) heading = title[1];
      if (lines[i].trim()) lastText = lines[i].trim();
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const lang = fence[1].toLowerCase();
    const notRun = /^<!--\s*not-run:\s*(.+?)\s*-->$/.exec(lastText)?.[1];
    lastText = '';
    const kind = TYPESCRIPT.has(lang)
      ? 'typescript'
      : SHELL.has(lang) || body.some((l) => /^\s*curl\s/.test(l))
        ? 'shell'
        : undefined;
    if (!kind) continue;
    const commands: DocExample['commands'] = [];
    if (kind === 'shell') {
      for (let j = 0; j < body.length; j++) {
        if (!body[j].trim() || /^\s*#/.test(body[j])) continue;
        const first = j;
        const text = [body[j]];
        while (/\\$/.test(body[j]) && j + 1 < body.length) text.push(body[++j]);
        commands.push({ line: start + 2 + first, text: text.join('\n') });
      }
    }
    examples.push({ kind, line: start + 1, heading, notRun, code: body.join('\n'), commands });
  }
  return examples;
}
