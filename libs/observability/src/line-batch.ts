import type { DestinationStream } from 'pino';

/** pino's destination (sonic-boom), as lineBatch uses it. */
export interface LineSink extends DestinationStream {
  flush(cb: (err?: Error) => void): void;
}

const held = new Set<() => void>();
const handOverAll = () => held.forEach((handOver) => handOver());

/**
 * Lines kept in an array and handed to `sink` joined, once they reach `batchChars` or `flush` is called. sonic-boom
 * appends each string it is given to its buffer and then measures the buffer's byte length, which copies it: given a
 * line at a time, ~2 KB copied per line of a 4 KB batch (docs/internals/decisions/0012-access-log-lines.md).
 */
export function lineBatch(sink: LineSink, batchChars: number): LineSink {
  const lines: string[] = [];
  let chars = 0;
  const handOver = () => {
    if (lines.length === 0) return;
    const text = lines.join('');
    lines.length = 0;
    chars = 0;
    sink.write(text);
  };
  // Ahead of pino's exit handlers, which write out what the destination holds.
  if (held.size === 0) {
    process.prependListener('beforeExit', handOverAll);
    process.prependListener('exit', handOverAll);
  }
  held.add(handOver);
  return {
    write(line: string): void {
      lines.push(line);
      if ((chars += line.length) >= batchChars) handOver();
    },
    flush(cb: (err?: Error) => void): void {
      handOver();
      sink.flush(cb);
    },
  };
}
