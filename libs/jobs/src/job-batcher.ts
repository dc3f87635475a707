// One claim, transaction and enqueue per batch of the jobs a worker runs at once (open-source BullMQ runs
// them one by one). A batch runs at `maxSize` items (no more can come) or `waitMs` after its first.
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
