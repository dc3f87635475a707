// A client of its own for paced loads (bench/lib/paced.ts `PacedClient`): its timers and its GC do
// not share an event loop with the driver's other load generators.
import { paced } from './paced';
import type { Target } from './load';

interface Job {
  target: Omit<Target, 'next'>;
  rate: number;
  durationS: number;
  connections: number;
}

process.on('message', (job: Job) => {
  void paced(job.target, job.rate, job.durationS, job.connections).then((r) => process.send!(r));
});
process.send!('ready');
