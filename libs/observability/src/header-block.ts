import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/** What a block is written on: Node's ServerResponse, or a test double with only `setHeader`. */
export interface HeaderTarget {
  setHeader(name: string, value: string): unknown;
}

/**
 * Node's header table on a response (`kOutHeaders`, internal): `{ [lowercase name]: [name, value] }`, which
 * `_storeHeader` writes as `name: value\r\n` per entry, in the order the entries were added, without validating again.
 */
const OUT_HEADERS: symbol | undefined = Object.getOwnPropertySymbols(
  new ServerResponse(new IncomingMessage(new Socket())),
).find((s) => s.description === 'kOutHeaders');

type Table = Record<string, [string, string]> | null;

/** A ServerResponse with `headers` set through a block gives exactly these header lines, as separate setHeader calls do. */
function blocksWrittenAsLines(): boolean {
  if (!OUT_HEADERS) return false;
  const names = ['X-Block-First', 'X-Block-Second'];
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  res.sendDate = false;
  new HeaderBlock(names, true).set(res, ['1', 'two']);
  const table = (res as unknown as Record<symbol, Table>)[OUT_HEADERS];
  (res as unknown as { _storeHeader(line: string, headers: Table): void })._storeHeader('HTTP/1.1 200 OK\r\n', table);
  const header = (res as unknown as { _header: string })._header;
  return header.startsWith('HTTP/1.1 200 OK\r\nX-Block-First: 1\r\nX-Block-Second: two\r\n');
}

// A header line per setHeader costs Node ~370 bytes (a [name, value] pair, a lowercased name, a slot in a dictionary
// that grows, four pieces of the header text): a block of headers set together is one entry whose value carries the
// following lines (docs/internals/decisions/0050-header-block.md).
export class HeaderBlock {
  private readonly key: string;
  /** `\r\n<name>: ` before each value after the first. */
  private readonly joins: string[];

  /** `asBlock` false, or a target that is not a ServerResponse: plain setHeader calls (header-block.spec.ts fails if Node moves its table). */
  constructor(
    private readonly names: readonly string[],
    private readonly asBlock = BLOCKS_WORK,
  ) {
    if (!names.length) throw new Error('HeaderBlock: no names');
    this.key = names[0].toLowerCase();
    this.joins = names.map((name) => `\r\n${name}: `);
  }

  /**
   * The values in the names' order. Each must be a valid header value (no CR or LF): only the first goes through
   * Node's checks. A header of the block read back with getHeader has the block's text (the first) or nothing.
   */
  set(res: HeaderTarget, values: readonly string[]): void {
    this.write(res, values);
  }

  /** The same values on every answer, their text made once: a setter. */
  fixed(values: readonly string[]): (res: HeaderTarget) => void {
    if (values.some((v) => /[\r\n]/.test(v))) throw new Error('HeaderBlock: a value with CR or LF');
    const text = this.joined(values);
    return (res) => this.write(res, values, text);
  }

  /** Sets the first header; then the rest in its entry of Node's table when there is one, else one by one. */
  private write(res: HeaderTarget, values: readonly string[], text?: string): void {
    res.setHeader(this.names[0], values[0]);
    const table = this.asBlock ? (res as unknown as Record<symbol, Table | undefined>)[OUT_HEADERS!] : undefined;
    if (table) table[this.key][1] = text ?? this.joined(values);
    else for (let i = 1; i < this.names.length; i++) res.setHeader(this.names[i], values[i]);
  }

  // A joined string was no smaller (measured): `+=` keeps the pieces until the head is written.
  private joined(values: readonly string[]): string {
    let text = values[0];
    for (let i = 1; i < this.names.length; i++) text += this.joins[i] + values[i];
    return text;
  }
}

/** Whether this Node writes a block as its lines; checked once at load. */
export const BLOCKS_WORK = blocksWrittenAsLines();
