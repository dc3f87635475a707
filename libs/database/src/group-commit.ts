export interface GroupCommitOptions {
  /** Batches written at once; the rest of the pool stays free for other requests. */
  maxInFlight: number;
  maxBatch: number;
  /** Retry a failed batch item by item: true for errors one item can cause, false for those that fail all alike. */
  isItemError: (err: unknown) => boolean;
}

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

// Concurrent callers share one write and one commit: items wait only while `maxInFlight` batches are being written,
// so under light load none waits for a timer. Each promise settles when its own item is committed (or not).
export class GroupCommit<T, R = void> {
  private readonly waiting: Pending<T, R>[] = [];
  private inFlight = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<R[] | void>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.writeBatch(batch).finally(() => {
        this.inFlight--;
        this.drain();
      });
    }
  }

  /** Never rejects: every outcome is delivered to the callers' promises. */
  private async writeBatch(batch: Pending<T, R>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results?.[i] as R));
    } catch (err) {
      if (batch.length === 1 || !this.options.isItemError(err)) {
        batch.forEach((p) => p.reject(err));
        return;
      }
      // One bad item must not fail the requests it happened to share a batch with.
      await Promise.all(
        batch.map((p) => this.write([p.item]).then((results) => p.resolve(results?.[0] as R), p.reject)),
      );
    }
  }
}
