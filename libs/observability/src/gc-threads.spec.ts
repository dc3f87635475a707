import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/** Each thread of a fresh Node process after lowerGcThreadPriority: its name and nice value. */
function threadsAfterLowering(): { lowered: number; threads: { name: string; nice: number }[] } {
  const script = `
    const { readdirSync, readFileSync } = require('node:fs');
    const lowered = require('./libs/observability/src/gc-threads').lowerGcThreadPriority();
    const threads = readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
      return {
        name: readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim(),
        nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]),
      };
    });
    process.stdout.write(JSON.stringify({ lowered, threads }));`;
  const run = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(run.stdout);
}

const linux = process.platform === 'linux' ? describe : describe.skip;

linux('lowerGcThreadPriority', () => {
  it("lowers every one of V8's platform threads to nice 10 and leaves the event loop's thread at 0", () => {
    const { lowered, threads } = threadsAfterLowering();
    const v8Workers = threads.filter((t) => t.name === 'V8Worker');
    // Fails when a Node release renames V8's threads: nothing would be lowered.
    expect(v8Workers.length).toBeGreaterThan(0);
    expect(lowered).toBe(v8Workers.length);
    expect(v8Workers.map((t) => t.nice)).toEqual(v8Workers.map(() => 10));
    expect(threads.filter((t) => t.name !== 'V8Worker').map((t) => t.nice)).toEqual(
      threads.filter((t) => t.name !== 'V8Worker').map(() => 0),
    );
  });
});
