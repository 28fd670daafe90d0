/** Spawning the real, built bin (`bin/mobile-builder-mcp.js` -> `dist/`). */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { BIN, waitFor } from './helpers.js';

/** Runs a CLI command to completion. */
export function runCli(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Creates a token with the CLI and returns it (the last stdout line). */
export function cliToken(dataDir: string, user: string, extra: string[] = []): string {
  const out = runCli(['token', 'create', '--user', user, '--data-dir', dataDir, ...extra]);
  if (out.status !== 0) throw new Error(out.stderr);
  return out.stdout.trim().split('\n').at(-1)!;
}

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  mcpUrl: string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `serve --http --port 0 --builder scripted` (unless `extra` names another; with extra environment variables) and waits for its "listening on" line. */
export async function spawnHttpServer(
  dataDir: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<SpawnedServer> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--http', '--port', '0', '--data-dir', dataDir, '--builder', 'scripted', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let err = '';
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await waitFor(
    () => /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(err)?.[1],
    20_000,
    `the server to listen (stderr: ${err})`,
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    url,
    mcpUrl: `${url}/mcp`,
    stderr: () => err,
    stdout: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  } as SpawnedServer;
}
