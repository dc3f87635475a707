import { readFileSync, statSync } from 'node:fs';
import { sleep } from './proc';

/** What V8's `--trace-gc-nvp` lines said between two points of a server's log. */
export interface GcSummary {
  /** Bytes allocated on the heap: the sum of each collection's `allocated=` (bytes since the previous one). */
  allocatedBytes: number;
  pausesMs: number[];
  /** Scavenges, and the bytes they moved to the old generation (`promoted=`): what outlived two of them. */
  scavenges: number;
  promotedBytes: number;
}

/** Node flags that make a server print one line per collection into its log (stdout). */
export const GC_TRACE_FLAGS = ['--trace-gc-nvp'];

/** Reads the lines a server wrote to `logPath` after `mark()`; the server must run with GC_TRACE_FLAGS. */
export class GcTrace {
  private offset = 0;

  constructor(private readonly logPath: string) {}

  mark(): void {
    this.offset = sizeOf(this.logPath);
  }

  async since(): Promise<GcSummary> {
    // The server's stdout reaches the file through a pipe: let the last lines land.
    await sleep(300);
    const text = readFileSync(this.logPath).subarray(this.offset).toString('utf8');
    const summary: GcSummary = { allocatedBytes: 0, pausesMs: [], scavenges: 0, promotedBytes: 0 };
    for (const line of text.split('\n')) {
      const pause = /(?:^|\s)pause=([\d.]+)/.exec(line);
      const allocated = /(?:^|\s)allocated=(\d+)/.exec(line);
      if (!pause || !allocated) continue;
      summary.pausesMs.push(Number(pause[1]));
      // A forced full collection (bench:profile --full-gc) runs several back to back; one prints 2^64 minus a little.
      if (Number(allocated[1]) < 2 ** 53) summary.allocatedBytes += Number(allocated[1]);
      if (!/ gc=s /.test(line)) continue;
      summary.scavenges++;
      summary.promotedBytes += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
    }
    return summary;
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
