import { chmodSync, chownSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The postgres user's ids when this process is root (Postgres, PgBouncer and pg_autoctl refuse to run as root). */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('postgres:'))!
    .split(':')
    .slice(2, 4)
    .map(Number);
  return { uid, gid };
}

/** A fresh temporary directory the postgres user may write in when we are root. */
export function postgresTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const user = postgresUser();
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o755);
  }
  return dir;
}
