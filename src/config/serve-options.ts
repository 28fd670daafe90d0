/**
 * `serve`'s settings after commander has parsed them (one field per row of `settings.ts` that
 * `serve` takes), and the `AppConfig` they make.
 */
import { resolve } from 'node:path';
import type { AppConfig, BuilderName } from '../app.js';
import type { AgentMode } from '../builders/expo/index.js';
import type { BuildSandbox } from '../builders/process-sandbox.js';
import type { Logger } from '../logger.js';
import type { ArtifactOrigins } from '../services/public-url.js';

/** Options of `serve`, after parsing (names are the table's, `settings.ts`). */
export interface ServeOptions {
  http?: boolean;
  host: string;
  port: number;
  dataDir: string;
  builder: BuilderName;
  builderConfig?: string;
  publicUrl?: string;
  scriptedStepMs: number;
  maxConcurrentWorkflows: number;
  leaseMs: number;
  plans?: string;
  allowedHosts?: string[];
  trustProxy?: string[];
  /** Bytes. */
  bodyLimit: number;
  logLevel: string;
  expoSdk: number;
  agentCommand?: string;
  agent?: AgentMode;
  /** Seconds. */
  agentTimeout: number;
  maxHeavySteps: number;
  updatesSigningKey?: string;
  artifactUrl?: string;
  artifactOrigins: ArtifactOrigins;
  browser?: string;
  /** false with `--no-build-sandbox` (or `SVC_NO_BUILD_SANDBOX`). */
  buildSandbox: boolean;
  agentNetwork?: boolean;
  agentEnv?: string[];
  metricsToken?: string;
  metricsPublic?: boolean;
}

/**
 * The service's configuration for these options: paths resolved against the working directory,
 * unset options left out (so that `createApp` applies the same defaults, `defaults.ts`).
 */
export function appConfigOf(options: ServeOptions, parts: { logger: Logger; sandbox: BuildSandbox }): AppConfig {
  return {
    dataDir: resolve(options.dataDir),
    builder: options.builder,
    scriptedStepMs: options.scriptedStepMs,
    maxConcurrentWorkflows: options.maxConcurrentWorkflows,
    leaseMs: options.leaseMs,
    ...(options.trustProxy?.length && { trustProxy: options.trustProxy }),
    logger: parts.logger,
    expo: {
      sdk: options.expoSdk,
      agentTimeoutSeconds: options.agentTimeout,
      heavySteps: options.maxHeavySteps,
      ...(options.agentCommand && { agentCommand: options.agentCommand }),
      ...(options.agent && { agent: options.agent }),
      ...(options.agentNetwork && { agentNetwork: true }),
      ...(options.agentEnv && { agentEnv: options.agentEnv }),
    },
    buildSandbox: parts.sandbox,
    ...(options.builderConfig && { builderConfigFile: resolve(options.builderConfig) }),
    ...(options.publicUrl && { publicUrl: options.publicUrl }),
    ...(options.artifactUrl && { artifactUrl: options.artifactUrl }),
    artifactOrigins: options.artifactOrigins,
    ...(options.plans && { plansFile: resolve(options.plans) }),
    ...(options.updatesSigningKey && { updatesSigningKeyFile: resolve(options.updatesSigningKey) }),
    ...(options.browser !== undefined && { browser: options.browser }),
    // Over HTTP only: a stdio server is one user's local process, with no /metrics (docs/metrics.md).
    ...(options.http && { metrics: { ...(options.metricsToken && { token: options.metricsToken }), ...(options.metricsPublic && { public: true }) } }),
  };
}
