import { Injectable } from '@nestjs/common';

// Tests override `nowMs` (overrideProvider) to cross a UTC midnight or a sunset without waiting;
// `now` derives from it, so both agree.
@Injectable()
export class Clock {
  /** No Date allocated per request. */
  nowMs(): number {
    return Date.now();
  }

  now(): Date {
    return new Date(this.nowMs());
  }
}
