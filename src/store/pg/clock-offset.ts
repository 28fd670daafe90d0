/**
 * The database's clock as seen from this process (docs/postgresql.md, "Clock"): `svc_now_ms()`
 * read with a round trip, the offset taken at the round trip's midpoint. The sample with the
 * smallest round trip is kept (its error is at most half that round trip).
 */

/** One measurement. */
interface Sample {
  offsetMs: number;
  roundTripMs: number;
}

/** Measures and keeps the offset of the database's clock. */
export class ClockOffset {
  private best: Sample | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** @param readDbNowMs reads `svc_now_ms()` (Unix ms on the database's clock). */
  constructor(private readonly readDbNowMs: () => Promise<number>) {}

  /** How far the database's clock is ahead of `Date.now()`, in ms (0 before the first sample). */
  get offsetMs(): number {
    return this.best?.offsetMs ?? 0;
  }

  /**
   * Takes one sample now; keeps it when its round trip is the smallest so far.
   * @throws the driver's error when the query fails
   */
  async sample(): Promise<void> {
    const before = Date.now();
    const dbNow = await this.readDbNowMs();
    const after = Date.now();
    // Whole ms: lease ends are written as `bigint` (a half ms from an odd round trip fails the write).
    const sample = { offsetMs: Math.round(dbNow - (before + after) / 2), roundTripMs: after - before };
    if (!this.best || sample.roundTripMs <= this.best.roundTripMs) this.best = sample;
  }

  /** Samples again every `everyMs` (an unref'd timer; a failing sample is skipped). */
  startEvery(everyMs: number): void {
    this.timer ??= setInterval(() => void this.sample().catch(() => undefined), everyMs);
    this.timer.unref();
  }

  /** Stops the samples. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
