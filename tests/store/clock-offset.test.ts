/**
 * The database's clock as a node sees it (docs/postgresql.md, "Clock"): the offset is a whole
 * number of ms, since lease ends (`bigint` columns) are written as `Date.now() + offset`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClockOffset } from '../../src/store/pg/clock-offset.js';

describe('ClockOffset', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('is a whole number of ms when the round trip is odd (its midpoint a half ms)', async () => {
    // The node reads 1000 before and 1001 after: the midpoint is 1000.5.
    const reads = [1000, 1001];
    vi.spyOn(Date, 'now').mockImplementation(() => reads.shift() ?? 1001);
    const clock = new ClockOffset(async () => 5000);
    await clock.sample();
    expect(Number.isInteger(clock.offsetMs)).toBe(true);
    expect(Math.abs(clock.offsetMs - 3999.5)).toBe(0.5);
  });
});
