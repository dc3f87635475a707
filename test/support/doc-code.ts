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
