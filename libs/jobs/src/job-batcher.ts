/**
 * Gathers the jobs BullMQ hands a processor concurrently into batches, so that a batch costs
 * one claim, one transaction and one enqueue instead of one each per job (BullMQ's open-source
 * Worker runs jobs one by one; batches are a BullMQ Pro feature). Each submit() settles when its
 * batch has run: with its own outcome, or with the error of the whole batch.
 *
 * A batch runs when `maxSize` items are waiting (the worker's concurrency: no more can come)
 * or `waitMs` after its first item arrived. Several batches may run at once.
 */
export class JobBatcher<I, R> {
  private pending: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private timer?: NodeJS.Timeout;

  /** `run` returns one outcome per item, in order: a value, or an Error that fails that item alone. */
  constructor(
    private readonly run: (items: I[]) => Promise<(R | Error)[]>,
    private readonly maxSize: number,
    private readonly waitMs: number,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxSize) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.waitMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return;
    this.run(batch.map((p) => p.item)).then(
      (outcomes) =>
        batch.forEach((p, i) => {
          const outcome = outcomes[i];
          if (outcome instanceof Error) p.reject(outcome);
          else p.resolve(outcome);
        }),
      (err: unknown) => batch.forEach((p) => p.reject(err)),
    );
  }
}
