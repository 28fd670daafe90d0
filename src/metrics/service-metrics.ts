/**
 * The service's Prometheus metrics (docs/metrics.md), with prom-client: one registry per app (never
 * prom-client's global one, so that several apps in one process keep apart), the counters and
 * histograms the engine, the tool adapter and the HTTP transport report to, gauges read from the
 * store at each scrape, and prom-client's default process metrics. Every name starts with `mbm_`;
 * no label carries a user, token, project or workflow id.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BuildLoopDelay } from './build-loop-delay.js';
import type { ToolCallObserver } from '../mcp/tool-call-observer.js';
import type { PoolStats } from '../store/port.js';
import type { Store } from '../store/store.js';
import type { RunEnd, RunObserver } from '../workflows/run-observer.js';

/** What the metrics read at scrape time. */
export interface ServiceMetricsDeps {
  /** The workflow counts (`countByStatus`) and, when it has one, the connection pool (`poolStats`). */
  store: Pick<Store, 'repos' | 'poolStats'>;
  /** Builds this process's engine runs now (waiting ones not counted); read at scrape time. */
  localRuns(): number;
  /** Queued workflows per builder that no live build worker has (`node-registry.ts`); read at scrape time. */
  unserved?(): Promise<Map<string, number>>;
}

/**
 * Upper bounds of the run duration buckets, in seconds: a scripted build takes under a second, an
 * Expo export 5 to 20 s, a build that waits for an answer minutes.
 */
const RUN_SECONDS_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800];

/** The metrics of one app: the observers it is given to, and the text a scrape returns. */
export class ServiceMetrics implements RunObserver, ToolCallObserver {
  /** The registry behind `/metrics`: this app's metrics and the process metrics. */
  readonly registry = new Registry();
  private readonly queued: Gauge;
  private readonly running: Gauge;
  private readonly waiting: Gauge;
  private readonly storeUp: Gauge;
  private readonly engineRuns: Gauge;
  private readonly withoutWorker: Gauge;
  private readonly pool: { total: Gauge; idle: Gauge; waiting: Gauge } | undefined;
  private readonly runSeconds: Histogram<'builder' | 'kind' | 'outcome'>;
  private readonly takeovers: Counter;
  /** The event-loop delay while this process holds builds (`heldChanged`). */
  private readonly buildLoopDelay: BuildLoopDelay;
  /**
   * Tool calls counted since the last scrape, by tool then code: a call costs two map lookups
   * (prom-client's `inc` with labels hashes them, several hundred ns on the hot path); the counter
   * takes them at scrape time.
   */
  private readonly pendingCalls = new Map<string, Map<string, number>>();
  private readonly httpRefusals: Counter<'status'>;

  constructor(private readonly deps: ServiceMetricsDeps) {
    const registers = [this.registry];
    this.queued = new Gauge({
      name: 'mbm_queue_depth',
      help: 'Workflows queued (not started), in the whole store',
      registers,
    });
    this.running = new Gauge({
      name: 'mbm_workflows_running',
      help: 'Workflows holding a build slot (running or cancelling), in the whole store',
      registers,
    });
    this.waiting = new Gauge({
      name: 'mbm_workflows_waiting',
      help: 'Workflows waiting for an answer to a question, in the whole store',
      registers,
    });
    this.storeUp = new Gauge({
      name: 'mbm_store_up',
      help: "1 when the store answered this scrape's query, 0 when it did not (the workflow gauges then keep their last values)",
      registers,
    });
    this.withoutWorker = new Gauge({
      name: 'mbm_workflows_without_worker',
      help: 'Workflows queued for a builder that no live build worker has (by builder): they wait until a worker with it starts',
      labelNames: ['builder'],
      registers,
    });
    this.engineRuns = new Gauge({
      name: 'mbm_engine_runs',
      help: "Builds this process's engine runs now (not counting ones waiting for an answer)",
      registers,
    });
    this.runSeconds = new Histogram({
      name: 'mbm_workflow_run_duration_seconds',
      help: "Duration of each workflow run on this process's engine, from the builder's start to its end",
      labelNames: ['builder', 'kind', 'outcome'],
      buckets: RUN_SECONDS_BUCKETS,
      registers,
    });
    this.takeovers = new Counter({
      name: 'mbm_lease_takeovers_total',
      help: "Workflows this process's reaper took over after their runner's lease expired",
      registers,
    });
    const pendingCalls = this.pendingCalls;
    new Counter({
      name: 'mbm_tool_calls_total',
      help: 'Tool calls answered by this process, by tool and outcome (ok, or the JSON-RPC error code)',
      labelNames: ['tool', 'code'] as const,
      registers,
      collect() {
        for (const [tool, byCode] of pendingCalls) {
          for (const [code, n] of byCode) if (n > 0) this.inc({ tool, code }, n);
          byCode.clear();
        }
      },
    });
    this.httpRefusals = new Counter({
      name: 'mbm_http_refusals_total',
      help: 'Requests to /mcp this process answered with an HTTP error status, by status',
      labelNames: ['status'],
      registers,
    });
    if (deps.store.poolStats) {
      this.pool = {
        total: new Gauge({ name: 'mbm_db_pool_total', help: 'Database connections open in the pool', registers }),
        idle: new Gauge({ name: 'mbm_db_pool_idle', help: 'Database connections open and not in use', registers }),
        waiting: new Gauge({
          name: 'mbm_db_pool_waiting',
          help: 'Queries waiting for a database connection',
          registers,
        }),
      };
    }
    // Every 100 ms, not prom-client's 10 ms: docs/performance.md "An idle server".
    collectDefaultMetrics({ register: this.registry, prefix: 'mbm_', eventLoopMonitoringPrecision: 100 });
    this.buildLoopDelay = new BuildLoopDelay(this.registry);
  }

  /** The `Content-Type` of `scrape`'s text (the Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Reads the store's gauges (one `countByStatus` query, and the pool's use) and returns every
   * metric in the Prometheus text format. A store that does not answer sets `mbm_store_up` to 0;
   * the scrape still answers.
   */
  async scrape(): Promise<string> {
    this.engineRuns.set(this.deps.localRuns());
    try {
      const counts = await this.deps.store.repos.workflows.countByStatus();
      this.queued.set(counts.queued);
      this.running.set(counts.running + counts.cancelling);
      this.waiting.set(counts.waiting_for_input);
      await this.showUnserved();
      this.storeUp.set(1);
    } catch {
      this.storeUp.set(0);
    }
    const stats = this.deps.store.poolStats?.();
    if (stats) this.showPool(stats);
    return this.registry.metrics();
  }

  /** Sets `mbm_workflows_without_worker`: one series per unserved builder (none when every queued workflow has a worker). */
  private async showUnserved(): Promise<void> {
    if (!this.deps.unserved) return;
    const unserved = await this.deps.unserved();
    this.withoutWorker.reset();
    for (const [builder, n] of unserved) this.withoutWorker.set({ builder }, n);
  }

  private showPool(stats: PoolStats): void {
    if (!this.pool) return;
    this.pool.total.set(stats.total);
    this.pool.idle.set(stats.idle);
    this.pool.waiting.set(stats.waiting);
  }

  heldChanged(held: number): void {
    this.buildLoopDelay.track(held);
  }

  runEnded(end: RunEnd): void {
    this.runSeconds.observe({ builder: end.builder, kind: end.kind, outcome: end.outcome }, end.seconds);
  }

  leasesTakenOver(count: number): void {
    this.takeovers.inc(count);
  }

  toolCalled(tool: string, code: string): void {
    let byCode = this.pendingCalls.get(tool);
    if (!byCode) {
      byCode = new Map();
      this.pendingCalls.set(tool, byCode);
    }
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
  }

  /** Counts a request to `/mcp` answered with `status` (400 and above). */
  httpRefused(status: number): void {
    this.httpRefusals.inc({ status: String(status) });
  }
}
