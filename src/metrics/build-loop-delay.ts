/**
 * The event-loop delay of a process while it runs builds (docs/metrics.md): a worker renews its
 * leases from its event loop, so anything that blocks the loop for long (a synchronous gzip, a
 * large synchronous read) delays the renewal and may cost it its lease. Measured with
 * `perf_hooks.monitorEventLoopDelay` while at least one build runs here, and kept since the start
 * (never reset at a scrape), so a scrape after the builds still tells how they went. The engine
 * reports each change of the number of builds it holds (`RunObserver.heldChanged`), so no timer
 * wakes an idle process to look (docs/performance.md "An idle server").
 */
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/** The monitor's sampling period (ms): the smallest delay it can see. */
const RESOLUTION_MS = 10;
/** The quantiles exported, as `quantile` labels. */
const QUANTILES = [0.5, 0.9, 0.99, 1] as const;

/** The event-loop delay while builds run, exported as `mbm_build_event_loop_delay_seconds{quantile}`. */
export class BuildLoopDelay {
  private readonly histogram: ELDHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private enabled = false;

  /**
   * Registers the gauge; the monitor stays off until `track` is told a build is held.
   * @param registry the app's registry
   */
  constructor(registry: Registry) {
    const histogram = this.histogram;
    new Gauge({
      name: 'mbm_build_event_loop_delay_seconds',
      help: 'Event-loop delay of this process while it ran builds, since its start, by quantile (1 is the largest), in seconds',
      labelNames: ['quantile'] as const,
      registers: [registry],
      collect() {
        if (histogram.count === 0) return;
        for (const q of QUANTILES)
          this.set({ quantile: String(q) }, (q === 1 ? histogram.max : histogram.percentile(q * 100)) / 1e9);
      },
    });
  }

  /**
   * Measures while this process holds at least one build.
   * @param held the number of workflows it holds now (running or waiting for an answer)
   */
  track(held: number): void {
    const busy = held > 0;
    if (busy === this.enabled) return;
    this.enabled = busy;
    if (busy) this.histogram.enable();
    else this.histogram.disable();
  }
}
