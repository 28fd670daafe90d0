/**
 * The database clock's offset (docs/postgresql.md, "Clock") is whole milliseconds: lease ends are
 * `Date.now() + offset`, written into `bigint` columns, and a round trip of an odd number of ms
 * puts its midpoint on a half millisecond.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClockOffset } from '../../src/store/pg/clock-offset.js';

describe('ClockOffset', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('is a whole number of ms when the round trip is odd', async () => {
    const now = vi.spyOn(Date, 'now');
    now.mockReturnValueOnce(1_000).mockReturnValueOnce(1_001);
    const offset = new ClockOffset(async () => 5_000);
    await offset.sample();
    expect(offset.offsetMs).toBe(4_000);
    expect(Number.isInteger(offset.offsetMs)).toBe(true);
  });
});
