/**
 * Time source. Services take a `Clock` so that tests can move time (hourly limits) without
 * waiting. Timestamps leave the service as ISO 8601 UTC with milliseconds (docs/contract.md#tools).
 */
export type Clock = () => Date;

/** The real clock. */
export const systemClock: Clock = () => new Date();

/** `2026-11-22T09:30:00.000Z` for the clock's current instant. */
export function isoNow(clock: Clock): string {
  return clock().toISOString();
}
