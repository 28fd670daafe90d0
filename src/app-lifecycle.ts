/**
 * Composition step of `createApp` (app.ts; docs/architecture.md): an app's start, health, drain
 * and stop, in the order its parts need (docs/workflows.md#draining).
 */
import { join } from 'node:path';
import type { EngineParts } from './app-engine.js';
import type { Logger } from './logger.js';
import type { JsonRpcGateway } from './mcp/json-rpc-gateway.js';
import type { Role } from './roles.js';
import { importUpdateChannelFiles } from './services/update-channel-import.js';
import type { Store } from './store/store.js';

/** The parts an app's lifecycle starts and stops. */
export interface LifecycleDeps {
  dataDir: string;
  role: Role;
  store: Store;
  engineParts: Pick<EngineParts, 'engine' | 'nodes' | 'artifactStore' | 'workspaceSync'>;
  gateway: Pick<JsonRpcGateway, 'start' | 'close'>;
  /** The PostgreSQL rate limiter's pool, ended after the store (or null). */
  limiterPool: { end(): Promise<void> } | null;
  logger: Logger;
}

/** How an app starts, reports its health, drains and stops (the methods of `App`, app.ts). */
export interface AppLifecycle {
  /** Starts the workflow engine (crash recovery first) and the MCP server. */
  start(): Promise<void>;
  /**
   * A worker's graceful stop, first half (docs/workflows.md#draining): claims nothing more from
   * now on (`healthProblem` says `draining`), releases workflows waiting for input at once, and
   * lets running builds finish for up to `timeoutMs`; `close` then interrupts what still runs.
   */
  drain(timeoutMs: number): Promise<void>;
  /** Graceful stop: engine shutdown, then the store. */
  close(): Promise<void>;
  /**
   * Why this process cannot take work now, or null when it can: `"starting"` (before `start`
   * has finished), `"draining"`, `"stopped"`, `"store_unavailable"` (the store does not answer), or
   * `"events_disconnected"` (PostgreSQL: the change-notice connection is down and reconnecting).
   */
  healthProblem(): Promise<string | null>;
}

/** The lifecycle of an app made of `deps`, in its `starting` phase. */
export function appLifecycle(deps: LifecycleDeps): AppLifecycle {
  const { store, gateway, logger } = deps;
  const { engine, nodes, artifactStore, workspaceSync } = deps.engineParts;
  let phase: 'starting' | 'ready' | 'draining' | 'stopped' = 'starting';
  return {
    async start() {
      const stale = await artifactStore.removeTemporary();
      if (stale > 0) logger.info({ folders: stale }, 'removed half-copied artifact folders left by an earlier stop');
      await importUpdateChannelFiles(deps.dataDir, store.repos.updateChannels, logger);
      await workspaceSync?.removeTemporary(join(deps.dataDir, 'workspaces'));
      await engine.start();
      await nodes.start();
      // A worker serves no MCP: its gateway is never started.
      if (deps.role !== 'worker') await gateway.start();
      if (phase === 'starting') phase = 'ready';
    },
    async healthProblem() {
      if (phase !== 'ready') return phase;
      try {
        await store.ping();
      } catch {
        return 'store_unavailable';
      }
      // PostgreSQL: the LISTEN connection is down (it reconnects by itself); revocations and cancels
      // made on other nodes are missed meanwhile.
      return store.listening ? null : 'events_disconnected';
    },
    async drain(timeoutMs) {
      if (phase === 'stopped') return;
      phase = 'draining';
      // A draining worker claims nothing more: its builder's queue no longer counts on it.
      await nodes.stop();
      await engine.drain(timeoutMs);
    },
    async close() {
      if (phase === 'stopped') return;
      phase = 'stopped';
      await engine.shutdown();
      await nodes.stop();
      await gateway.close().catch(() => undefined);
      await store.close();
      await deps.limiterPool?.end().catch(() => undefined);
    },
  };
}
