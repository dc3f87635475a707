import { join } from 'node:path';

/** Where the redis-server PIDs of running test files are kept, for global setup to stop leftovers. */
export const REDIS_PID_DIR = join(__dirname, '..', 'artifacts', 'redis-pids');
