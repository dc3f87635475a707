import { Clock } from '@app/config';

/** A Clock a test can stop at a chosen instant and move; real time until set. */
export class TestClock extends Clock {
  private at?: number;

  override nowMs(): number {
    return this.at ?? Date.now();
  }

  set(at: Date | number): void {
    this.at = typeof at === 'number' ? at : at.getTime();
  }

  advance(ms: number): void {
    this.set(this.nowMs() + ms);
  }
}
