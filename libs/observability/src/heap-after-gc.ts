import { constants, NodeGCPerformanceDetail, PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Gauge } from 'prom-client';

const YOUNG = new Set(['new_space', 'new_large_object_space']);

/** The heap in use outside the young generation (whose objects are all short-lived or about to be promoted). */
function oldGenerationUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (!YOUNG.has(space.space_name)) used += space.space_used_size;
  return used;
}

// Node's types leave `detail` off the base entry; a gc entry carries its kind there.
const isFullGc = (entry: PerformanceEntry & { detail?: NodeGCPerformanceDetail }) =>
  entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;

// RSS and heap_size_used also count garbage not collected yet, so they rise and fall with the collector's pace:
// read as a full collection ends, the old generation is what the process holds
// (docs/internals/decisions/0054-heap-after-full-gc-gauge.md).
export function observeHeapAfterFullGc(): void {
  const gauge = new Gauge({
    name: 'petstore_nodejs_heap_after_full_gc_bytes',
    help: 'Old-generation heap in use as the last full (mark-compact) collection ended; at start, until the first',
  });
  gauge.set(oldGenerationUsed());
  new PerformanceObserver((list) => {
    if (list.getEntries().some(isFullGc)) gauge.set(oldGenerationUsed());
  }).observe({ entryTypes: ['gc'] });
}
