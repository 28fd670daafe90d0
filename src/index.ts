/**
 * mobile-builder-mcp as a library: build the service with `createApp`, then serve it with
 * `listenHttp` or `serveStdio`. The CLI (`bin/`) does exactly that.
 */
export { createApp, listenHttp, VERSION, BUILDER_NAMES, type App, type AppConfig, type BuilderName } from './app.js';
export { httpDepsOf } from './http-listener.js';
export {
  startHttpServer,
  type HttpServerDeps,
  type HttpServerOptions,
  type RunningHttpServer,
} from './transports/http-server.js';
export { serveStdio, type StdioServerOptions } from './transports/stdio-server.js';
export { ServiceError, ERROR_TABLE, MESSAGES, type ServiceErrorKind } from './errors.js';
export type {
  Builder,
  BuildContext,
  BuildJob,
  QuestionSpec,
  PublishRequest,
  PublishedArtifact,
  Platform,
} from './builders/builder.js';
export { BuildFailure } from './builders/builder.js';
export { ScriptedBuilder } from './builders/scripted-builder.js';
export { CommandBuilder, loadCommandBuilderConfig, type CommandBuilderConfig } from './builders/command-builder.js';
export { DEFAULT_PLANS, loadPlans, type PlanLimits, type PlanTable } from './limits/plans.js';
export type { RequestRateLimiter, RateDecision } from './limits/request-rate-limiter.js';
export { ALL_TOOLS } from './mcp/tools/index.js';
