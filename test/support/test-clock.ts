import { Clock } from '@app/config';

/** A Clock a test can stop at a chosen instant and move; real time until set. */
export class TestClock extends Clock {
  private at?: number;

  override now(): Date {
    return new Date(this.at ?? Date.now());
  }

  set(at: Date | number): void {
    this.at = typeof at === 'number' ? at : at.getTime();
  }

  advance(ms: number): void {
    this.set(this.now().getTime() + ms);
  }
}
