import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** What Node names the threads of V8's platform, which run the concurrent marking and parallel GC phases. */
const V8_WORKER_THREAD = 'V8Worker';
const LOWER = 10;

// On a core the event loop shares with them (a pinned process, a one-CPU pod), concurrent marking took half the
// core from requests for ~0.5 s per mark-compact; at nice 10 it runs mostly on what the loop leaves, and on
// other cores as before (docs/internals/decisions.md, "GC helpers yield to the event loop"). Linux only: there a
// thread's id is a pid, and setpriority on it applies to that thread alone.
export function lowerGcThreadPriority(): number {
  let lowered = 0;
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  for (const tid of tids) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== V8_WORKER_THREAD) continue;
      setPriority(Number(tid), LOWER);
      lowered++;
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return lowered;
}
