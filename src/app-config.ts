/**
 * What `createApp` (app.ts) is configured with: `AppConfig`, one field per setting of the command
 * line (docs/cli.md#command-line, `core/defaults.ts`) and the parts embedding and tests pass in.
 */
import type { OAuthLifetimes } from './auth/oauth-grants.js';
import type { Builder } from './builders/builder.js';
import type { BuilderName, BuilderSettings } from './builders/builder-registry.js';
import type { BuildSandbox } from './builders/process-sandbox.js';
import type { Clock } from './clock.js';
import type { PlanTable } from './limits/plans.js';
import type { RequestRateLimiter } from './limits/request-rate-limiter.js';
import type { Logger } from './logger.js';
import type { JsonRpcGateway } from './mcp/json-rpc-gateway.js';
import type { MetricsAccessOptions } from './metrics/metrics-access.js';
import type { Role } from './roles.js';
import type { ArtifactOrigins } from './services/public-url.js';

/**
 * What `createApp` needs; every field but `dataDir` has a default, the same as the command line's
 * (`core/defaults.ts`, docs/cli.md#command-line).
 */
export interface AppConfig {
  /** Holds the SQLite file, the workspaces and the artifacts (with PostgreSQL: the workspaces and caches). Created if missing. */
  dataDir: string;
  /** `:memory:` for a private in-memory store; default `<dataDir>/mobile-builder.db`. Ignored with `databaseUrl`. */
  databaseFile?: string;
  /** `postgres://…` or `postgresql://…` (`--database-url`): the store is that PostgreSQL database; absent, the SQLite file. */
  databaseUrl?: string;
  /** PostgreSQL connections in this process's pool, besides its listener (`--db-pool-size`, `DEFAULTS.dbPoolSize`). */
  dbPoolSize?: number;
  /** Session-mode URL of the PostgreSQL LISTEN connection (`--database-listen-url`); default `databaseUrl`. */
  databaseListenUrl?: string;
  /**
   * `application_name` of this process's PostgreSQL connections; default
   * `mobile-builder-mcp/<role>/<runner id>`, so that `pg_stat_activity` tells the nodes apart.
   */
  applicationName?: string;
  /**
   * What this process does (`serve --role`, docs/operators.md "Roles"; default `all`): `api` claims no
   * workflow and builds nothing (workers do), `worker` starts the engine alone (no MCP server).
   */
  role?: Role;
  /**
   * api role: how long `svc_send_message` waits for a worker to claim an idle project's new
   * workflow before it answers `queued`, in ms (`--claim-wait-ms`, `DEFAULTS.claimWaitMs`).
   */
  claimWaitMs?: number;
  /**
   * How long `svc_send_message` waits for the node holding a workflow to check an answer this node
   * cannot check itself, in ms (default 10000; docs/workflows.md "Where answers are checked").
   */
  answerCheckTimeoutMs?: number;
  /**
   * PostgreSQL store: this node's disk cache of artifacts read from the database, in MiB
   * (`--artifact-cache-mb`, `DEFAULTS.artifactCacheMb`). Read by the artifact store of the
   * PostgreSQL store; the SQLite store keeps artifacts on disk and ignores it.
   */
  artifactCacheMb?: number;
  /**
   * PostgreSQL store: the largest workspace snapshotted after a completed workflow, in MiB
   * (`--workspace-snapshot-max-mb`, `DEFAULTS.workspaceSnapshotMaxMb`). Read by the workspace
   * snapshots of the PostgreSQL store; ignored on SQLite (one machine keeps its workspaces).
   */
  workspaceSnapshotMaxMb?: number;
  /**
   * The key file that seals projects' secrets (`--secrets-key-file`; default `<dataDir>/secrets.key`,
   * created on first use; docs/security.md "Project environment").
   */
  secretsKeyFile?: string;
  /** The builder to run (default `expo`, as `serve`'s). */
  builder?: BuilderName;
  /** JSON config of the `command` builder (required with it). */
  builderConfigFile?: string;
  /** Settings of the `expo` builder (`--expo-sdk`, `--agent-command`, ...). */
  expo?: BuilderSettings['expo'];
  /** PEM private key that signs Expo Updates manifests (`--updates-signing-key`). */
  updatesSigningKeyFile?: string;
  /** Pause per step of the `scripted` builder, in ms (`--scripted-step-ms`, `DEFAULTS.scriptedStepMs`). */
  scriptedStepMs?: number;
  /** Workflows running at once in this process (`--max-concurrent-workflows`, `DEFAULTS.maxConcurrentWorkflows`). */
  maxConcurrentWorkflows?: number;
  /** Base of preview links; default from the HTTP listener's address. */
  publicUrl?: string;
  /** Base of artifact links when artifacts have their own origin (`--artifact-url`). */
  artifactUrl?: string;
  /** One origin per project for web previews and deployments (default), or the shared path form (`--artifact-origins`). */
  artifactOrigins?: ArtifactOrigins;
  /** Operator plan table (JSON); default the built-in plans. */
  plansFile?: string;
  /** The plan table itself, in place of `plansFile` (embedding, tests). */
  plans?: PlanTable;
  /** Default: counted in the store (shared by every process on this data dir); in memory for `:memory:`. */
  rateLimiter?: RequestRateLimiter;
  /** Requests with a missing or refused token allowed per client address and minute over HTTP (default 120). */
  unauthenticatedPerMinute?: number;
  /**
   * Trusted proxies (`--trust-proxy`: addresses, CIDR ranges, `loopback`): a request whose peer is
   * one of them has its client address taken from `X-Forwarded-For` (docs/operators.md "Behind a TLS proxy").
   * Default none: the client address is the socket's peer.
   */
  trustProxy?: string[];
  /** Where the app logs (default a new logger at the default level, on stderr). */
  logger?: Logger;
  /** The time source (default the system clock; tests pass a manual one). */
  clock?: Clock;
  /** How often the engine reaps expired leases and looks for work (ms, default 1000). */
  pollIntervalMs?: number;
  /** How long a cancel waits for the builder to stop before killing its processes and recording `cancelled`, in ms (default 15 000). */
  cancelTimeoutMs?: number;
  /** Longest time one JSON-RPC message may take before it is answered with -32603, in ms (default 30 000). */
  requestDeadlineMs?: number;
  /** Length of a workflow claim's lease, in ms (`--lease-ms`, `DEFAULTS.leaseMs`); see docs/workflows.md, "Leases". */
  leaseMs?: number;
  /** How often a running workflow's lease is renewed (ms, default min(500, leaseMs / 5)). */
  heartbeatMs?: number;
  /**
   * Whether this node's engine claims and runs workflows (default: false for the `api` role, else true). False for a node that
   * serves the tools, the console and the artifacts but builds nothing (the `api` role): its
   * engine reaps, and its sends wait for the workers (docs/workflows.md "Nodes that claim nothing").
   */
  claims?: boolean;
  /** Lifetimes of OAuth codes and tokens, in seconds (docs/security.md "Sign in with OAuth"); defaults 60 s, 1 h, 30 days. */
  oauth?: OAuthLifetimes;
  /**
   * Browser for preview screenshots (`--browser`, docs/hosts.md "Screenshots"); when absent, Debian's
   * chromium or one on PATH. A path that names no executable file means no browser (no fallback).
   */
  browser?: string;
  /**
   * A gateway made before the app, without tools (a stdio start answers `initialize` with it
   * before it opens the store, docs/performance.md "Start-up time"): the app attaches its tools to it and
   * uses it. Default: a new one.
   */
  gateway?: JsonRpcGateway;
  /** A builder object to run instead of `builder` (embedding, and tests that drive a builder by hand). */
  builderInstance?: Builder;
  /** Where builds run their processes (default: bubblewrap when it works here, else none); docs/security.md "The build sandbox". */
  buildSandbox?: BuildSandbox;
  /**
   * Count the Prometheus metrics and serve `GET /metrics` (docs/metrics.md), with this access rule
   * (`--metrics-token`, `--metrics-public`; `{}`: loopback clients only). Absent: no metrics (a
   * stdio server, the one-shot commands, embedding).
   */
  metrics?: MetricsAccessOptions;
}
