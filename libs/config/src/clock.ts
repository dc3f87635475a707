import { Injectable } from '@nestjs/common';

/**
 * The time source of request handling (rate-limit windows, sunsets, expiries).
 * Tests replace it (overrideProvider) to cross a UTC midnight or a sunset without waiting;
 * they override `nowMs`, which `now` derives from, so both always agree.
 */
@Injectable()
export class Clock {
  /** Unix milliseconds: the request path's form (no Date allocated per request). */
  nowMs(): number {
    return Date.now();
  }

  now(): Date {
    return new Date(this.nowMs());
  }
}
