import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery } from '@app/database';
import { apiKeyQueries } from './access.queries';

// Also reloaded on invalidations; this covers a missed one.
const RELOAD_MS = 60_000;

// Live keys issued before tags: a legacy key whose prefix is not here is refused without
// Postgres. New keys are tagged, so the set only shrinks.
@Injectable()
export class LegacyKeyPrefixes {
  private readonly logger = new Logger(LegacyKeyPrefixes.name);
  /** Undefined until loaded: every legacy key goes to Postgres. */
  private prefixes?: Set<string>;
  private timer?: NodeJS.Timeout;
  private loading?: Promise<void>;

  constructor(private readonly dataSource: DataSource) {}

  start(): Promise<void> {
    this.timer = setInterval(() => void this.reload(), RELOAD_MS);
    this.timer.unref();
    return this.reload();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  mayExist(prefix: string): boolean {
    return this.prefixes === undefined || this.prefixes.has(prefix);
  }

  reload(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<void> {
    try {
      const rows = await preparedQuery<{ prefix: string }>(this.dataSource, apiKeyQueries.legacyPrefixes());
      this.prefixes = new Set(rows.map((r) => r.prefix));
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'legacy key prefixes not loaded');
    }
  }
}
