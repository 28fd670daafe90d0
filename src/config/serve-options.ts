/**
 * `serve`'s and `worker`'s settings after commander has parsed them (one field per row of
 * `settings.ts` that the command takes), and the `AppConfig` they make.
 */
import { resolve } from 'node:path';
import type { AppConfig, BuilderName } from '../app.js';
import type { AgentMode } from '../builders/expo/index.js';
import type { BuildSandbox } from '../builders/process-sandbox.js';
import type { Logger } from '../logger.js';
import type { ArtifactOrigins } from '../services/public-url.js';
import type { Role } from '../roles.js';

/** Options of `worker`, after parsing (names are the table's, `settings.ts`): the rows whose commands name `worker`. */
export interface WorkerOptions {
  host: string;
  /** Port of the `/healthz` listener; none when absent. */
  healthPort?: number;
  dataDir: string;
  /** `postgres://…`: the store is PostgreSQL; absent: the SQLite file in `dataDir`. */
  databaseUrl?: string;
  dbPoolSize: number;
  databaseListenUrl?: string;
  builder: BuilderName;
  builderConfig?: string;
  scriptedStepMs: number;
  maxConcurrentWorkflows: number;
  leaseMs: number;
  /** Ms a SIGTERM lets running builds finish. */
  drainTimeoutMs: number;
  plans?: string;
  logLevel: string;
  expoSdks: number[];
  agentCommand?: string;
  agent?: AgentMode;
  /** Seconds. */
  agentTimeout: number;
  maxHeavySteps: number;
  /** false with `--no-build-sandbox` (or `SVC_NO_BUILD_SANDBOX`). */
  buildSandbox: boolean;
  agentNetwork?: boolean;
  agentEnv?: string[];
  /** MiB. */
  artifactCacheMb: number;
  /** MiB. */
  workspaceSnapshotMaxMb: number;
  secretsKeyFile?: string;
  metricsToken?: string;
  metricsPublic?: boolean;
}

/** Options of `serve`, after parsing: the worker's and the MCP side's. */
export interface ServeOptions extends WorkerOptions {
  http?: boolean;
  role: Role;
  /** Unset: `DEFAULTS.port` with `--http`; over stdio, any free port for the previews. */
  port?: number;
  claimWaitMs: number;
  publicUrl?: string;
  allowedHosts?: string[];
  trustProxy?: string[];
  /** Bytes. */
  bodyLimit: number;
  /** The HTTP listener's request slots (`--max-concurrent-requests`). */
  maxConcurrentRequests: number;
  updatesSigningKey?: string;
  artifactUrl?: string;
  artifactOrigins: ArtifactOrigins;
  browser?: string;
}

/**
 * The service's configuration for these options (a worker's lack the MCP side's): paths resolved
 * against the working directory, unset options left out (so that `createApp` applies the same
 * defaults, `core/defaults.ts`).
 */
export function appConfigOf(
  options: WorkerOptions & Partial<ServeOptions>,
  parts: { logger: Logger; sandbox: BuildSandbox | undefined; role: Role },
): AppConfig {
  return {
    dataDir: resolve(options.dataDir),
    role: parts.role,
    ...(options.databaseUrl && { databaseUrl: options.databaseUrl }),
    dbPoolSize: options.dbPoolSize,
    ...(options.databaseListenUrl && { databaseListenUrl: options.databaseListenUrl }),
    ...(options.claimWaitMs !== undefined && { claimWaitMs: options.claimWaitMs }),
    artifactCacheMb: options.artifactCacheMb,
    workspaceSnapshotMaxMb: options.workspaceSnapshotMaxMb,
    ...(options.secretsKeyFile && { secretsKeyFile: resolve(options.secretsKeyFile) }),
    builder: options.builder,
    scriptedStepMs: options.scriptedStepMs,
    maxConcurrentWorkflows: options.maxConcurrentWorkflows,
    leaseMs: options.leaseMs,
    ...(options.trustProxy?.length && { trustProxy: options.trustProxy }),
    logger: parts.logger,
    expo: {
      sdks: options.expoSdks,
      agentTimeoutSeconds: options.agentTimeout,
      heavySteps: options.maxHeavySteps,
      ...(options.agentCommand && { agentCommand: options.agentCommand }),
      ...(options.agent && { agent: options.agent }),
      ...(options.agentNetwork && { agentNetwork: true }),
      ...(options.agentEnv && { agentEnv: options.agentEnv }),
    },
    ...(parts.sandbox && { buildSandbox: parts.sandbox }),
    ...(options.builderConfig && { builderConfigFile: resolve(options.builderConfig) }),
    ...(options.publicUrl && { publicUrl: options.publicUrl }),
    ...(options.artifactUrl && { artifactUrl: options.artifactUrl }),
    ...(options.artifactOrigins && { artifactOrigins: options.artifactOrigins }),
    ...(options.plans && { plansFile: resolve(options.plans) }),
    ...(options.updatesSigningKey && { updatesSigningKeyFile: resolve(options.updatesSigningKey) }),
    ...(options.browser !== undefined && { browser: options.browser }),
    // Over HTTP only: a stdio server is one user's local process, with no /metrics (docs/metrics.md).
    ...((options.http || options.healthPort !== undefined) && {
      metrics: {
        ...(options.metricsToken && { token: options.metricsToken }),
        ...(options.metricsPublic && { public: true }),
      },
    }),
  };
}
