/**
 * The default of every setting that has one, in the unit its table row names
 * (`settings.ts`, docs/cli.md#command-line). One home: the command line, `createApp` and the parts
 * they build (engine, transports, builders) fall back to these values and to no other.
 *
 * A leaf of `core/` (docs/architecture.md, "Layers"): it imports nothing, so every layer may read it.
 */
export const DEFAULTS = {
  /** HTTP bind address. */
  host: '127.0.0.1',
  /** HTTP port (in stdio mode, the preview server's). */
  port: 3333,
  /** The builder a server runs when none is named. */
  builder: 'expo',
  /** Pause per step of the scripted builder, in ms. */
  scriptedStepMs: 500,
  /** Workflows running at once in one process. */
  maxConcurrentWorkflows: 2,
  /** Lease of a running workflow's claim, in ms (docs/workflows.md#leases). */
  leaseMs: 2500,
  /** How long a send through a node that claims nothing waits for a worker's claim, in ms (docs/workflows.md#nodes-that-claim-nothing). */
  claimWaitMs: 2000,
  /** Largest HTTP request body and largest stdio line (one JSON-RPC message), in bytes: 1 MiB. */
  bodyLimitBytes: 1024 * 1024,
  /** Authenticated MCP requests an HTTP listener handles at once (its request slots; a session wait holds one). */
  maxConcurrentRequests: 256,
  /** Log level of the process logger. */
  logLevel: 'info',
  /** Limit of one code agent run of the expo builder, in seconds. */
  agentTimeoutSeconds: 900,
  /** Type checks and exports of the expo builder running at once. */
  maxHeavySteps: 1,
  /** Previews and web deployments on one origin per project. */
  artifactOrigins: 'per-project',
  /** What a `serve` process does: everything (MCP and builds), as one machine always did. */
  role: 'all',
  /** PostgreSQL connections in one process's pool, besides its listener. */
  dbPoolSize: 10,
  /** Size of an API node's cache of artifacts read from PostgreSQL, in MiB. */
  artifactCacheMb: 2048,
  /** Largest workspace snapshotted after a completed workflow, in MiB. */
  workspaceSnapshotMaxMb: 200,
  /** How long a worker's SIGTERM lets running builds finish before interrupting them, in ms. */
  drainTimeoutMs: 30_000,
} as const;
