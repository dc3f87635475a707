import { Injectable } from '@nestjs/common';

/**
 * The time source of request handling (rate-limit windows, sunsets, expiries).
 * Tests replace it (overrideProvider) to cross a UTC midnight or a sunset without waiting.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
