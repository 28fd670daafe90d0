/**
 * `StoreEvents` for PostgreSQL (docs/postgresql.md, "Change notices"): one dedicated connection
 * runs `LISTEN svc_events`; every node's transactions send `<kind>:<id>` on that channel with
 * `pg_notify`, delivered at COMMIT. This process's own notices are delivered to its listeners
 * right after its commit (`deliver`), so when they come back through LISTEN (from a backend of
 * this process's pool) they are dropped, never delivered twice. When the connection fails or is
 * closed by the server it comes back with a backoff from 0.1 s to 5 s, and every reset listener
 * is called after each reconnect: notices sent meanwhile are lost, so caches clear and live views
 * and the engine look again.
 */
import pg from 'pg';
import type { StoreEvent, StoreEvents } from '../port.js';

/** The channel every node notifies and listens on. */
export const EVENTS_CHANNEL = 'svc_events';

const KINDS = new Set<StoreEvent['kind']>(['project', 'queued', 'workflow', 'cache']);
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;

/** The listener connection and this process's listeners (see the file comment). */
export class PgEvents implements StoreEvents {
  private readonly listeners = new Map<StoreEvent['kind'], Set<(id: string) => void>>();
  private readonly resetListeners = new Set<() => void>();
  private readonly lostListeners = new Set<() => void>();
  private client: pg.Client | undefined;
  private connected = false;
  private closed = false;
  private backoffMs = FIRST_BACKOFF_MS;
  private retry: NodeJS.Timeout | undefined;
  private backendPid: number | null = null;

  /**
   * @param url the connection string of the LISTEN connection (a session-mode one: a transaction-mode pooler drops LISTEN)
   * @param applicationName `application_name` of that connection (`<name>/listen`)
   * @param ownBackends whether a backend pid is one of this process's pool connections (its notices were delivered already)
   * @param log where connection failures are reported (one line each)
   */
  constructor(
    private readonly url: string,
    private readonly applicationName: string,
    private readonly ownBackends: (pid: number) => boolean,
    private readonly log: (line: string) => void,
  ) {}

  /** True while the LISTEN connection is up (a node's `/healthz` answers 503 otherwise). */
  get listening(): boolean {
    return this.connected;
  }

  /** The server process id of the LISTEN connection while it is up (tests terminate it with `pg_terminate_backend`), else null. */
  get listenerPid(): number | null {
    return this.connected ? this.backendPid : null;
  }

  /**
   * Opens the LISTEN connection for the first time.
   * @throws the driver's error when the database cannot be reached (no retry: start-up fails).
   */
  async start(): Promise<void> {
    await this.connect();
  }

  subscribe(kind: StoreEvent['kind'], listener: (id: string) => void): () => void {
    let set = this.listeners.get(kind);
    if (!set) {
      set = new Set();
      this.listeners.set(kind, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  onReset(listener: () => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  onConnectionLost(listener: () => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** A connection of this process to the database was lost (the LISTEN one, or one of the pool's): tells `onConnectionLost` listeners. */
  connectionLost(): void {
    for (const listener of [...this.lostListeners]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Delivers committed events to this process's listeners. A listener's failure is its own. */
  deliver(events: readonly StoreEvent[]): void {
    for (const event of events) this.dispatch(event.kind, event.id);
  }

  /** Closes the LISTEN connection for good (the store is closing). Idempotent. */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    if (client) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: `${this.applicationName}/listen`,
      connectionTimeoutMillis: 5000,
      query_timeout: 5000,
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel !== EVENTS_CHANNEL || message.payload === undefined) return;
      if (this.ownBackends(message.processId)) return;
      const colon = message.payload.indexOf(':');
      const kind = message.payload.slice(0, colon) as StoreEvent['kind'];
      if (colon < 0 || !KINDS.has(kind)) return;
      this.dispatch(kind, message.payload.slice(colon + 1));
    });
    this.client = client;
    try {
      await client.connect();
      const pid = await client.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`);
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      this.backendPid = pid.rows[0]!.pid;
    } catch (error) {
      this.client = undefined;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.connected = true;
    this.backoffMs = FIRST_BACKOFF_MS;
  }

  /** The connection failed or ended: reconnect after the backoff, unless the store is closing. */
  private lost(client: pg.Client, error?: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    const wasConnected = this.connected;
    this.connected = false;
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.connectionLost();
    if (wasConnected)
      this.log(
        `store: the change-notice connection was lost (${error?.message ?? 'closed by the server'}); reconnecting`,
      );
    this.schedule();
  }

  private schedule(): void {
    if (this.retry || this.closed) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect().then(
        () => {
          if (this.connected) this.reset();
        },
        () => this.schedule(),
      );
    }, delay);
    this.retry.unref();
  }

  private reset(): void {
    for (const listener of [...this.resetListeners]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  private dispatch(kind: StoreEvent['kind'], id: string): void {
    const set = this.listeners.get(kind);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(id);
      } catch {
        // The writer must not see a listener's failure.
      }
    }
  }
}
