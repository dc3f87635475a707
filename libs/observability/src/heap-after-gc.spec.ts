import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { register } from 'prom-client';
import { observeHeapAfterFullGc } from './heap-after-gc';

setFlagsFromString('--expose-gc');
const fullGc = runInNewContext('gc') as () => void;

async function afterFullGc(): Promise<number> {
  const metric = register.getSingleMetric('petstore_nodejs_heap_after_full_gc_bytes');
  if (!metric) throw new Error('petstore_nodejs_heap_after_full_gc_bytes is not registered');
  const read = async () => (await metric.get()).values[0].value;
  const before = await read();
  fullGc();
  // The gc entry reaches the observer a turn later.
  for (let i = 0; i < 100 && (await read()) === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return read();
}

describe('petstore_nodejs_heap_after_full_gc_bytes', () => {
  beforeAll(() => observeHeapAfterFullGc());

  it('rises by what a full collection keeps and falls once it is released', async () => {
    const held = Array.from({ length: 200_000 }, (_, i) => ({ i, text: `row ${i}` }));
    const holding = await afterFullGc();
    held.length = 0;
    const released = await afterFullGc();
    expect(holding - released).toBeGreaterThan(8 * 1024 * 1024);
  });
});
