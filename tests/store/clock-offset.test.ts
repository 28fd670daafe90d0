/**
 * The PostgreSQL store's view of the database's clock (docs/postgresql.md, "Clock"): the offset is
 * a whole number of ms, since lease ends computed from it go into a `bigint` column.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClockOffset } from '../../src/store/pg/clock-offset.js';

describe('ClockOffset', () => {
  afterEach(() => vi.restoreAllMocks());

  it('keeps whole milliseconds when the round trip has an odd length (its midpoint is half a ms)', async () => {
    const now = vi.spyOn(Date, 'now');
    now.mockReturnValueOnce(1_000).mockReturnValueOnce(1_001);
    const clock = new ClockOffset(async () => 5_000);
    await clock.sample();
    expect(clock.offsetMs).toBe(4_000); // 5 000 - 1 000.5, rounded
    expect(Number.isInteger(clock.offsetMs)).toBe(true);
  });

  it('keeps the sample with the shortest round trip', async () => {
    const now = vi.spyOn(Date, 'now');
    now
      .mockReturnValueOnce(0)
      .mockReturnValueOnce(10)
      .mockReturnValueOnce(100)
      .mockReturnValueOnce(102)
      .mockReturnValueOnce(200)
      .mockReturnValueOnce(250);
    const reads = [1_005, 1_101, 9_999];
    const clock = new ClockOffset(async () => reads.shift()!);
    for (let i = 0; i < 3; i++) await clock.sample();
    expect(clock.offsetMs).toBe(1_000); // the second sample: 1 101 - 101
  });
});
