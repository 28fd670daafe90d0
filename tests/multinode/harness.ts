/**
 * A multi-node deployment for a test file (docs/operators.md "Running on several machines"): one
 * PostgreSQL database of its own (`createTestDatabase`), N API nodes (`serve --http --role api`)
 * and M build workers (`worker --health-port 0`) of the built bin, each a detached process group
 * with its own data dir, its runner host (`SVC_RUNNER_HOST`, so every row and log names the node)
 * and its captured stderr. Nothing is mocked: the tests talk to the nodes over HTTP with real SDK
 * clients and raw requests, create tokens with the `token` command on the same database URL, and
 * read the rows with `pg`.
 *
 * Every node builds with the `command` builder running the probe below (unsandboxed, so that its
 * pids are this machine's), which records in `builds.log` which node ran which workflow, and which
 * the tests steer through the instruction:
 *
 * - `hold:<tag>`: writes its pid to `<probe>/<workflow id>.pid`, says `holding <tag>`, and waits
 *   until the test calls `release(tag)` (or the build is cancelled or killed);
 * - `ask`: asks for an app identifier (`::ask`) and says the answer it got;
 * - `bulk:<MB>`: writes MB of random bytes into the workspace and as much into its web preview
 *   (what a real app's snapshot and preview weigh);
 * - anything else: one step, a web preview (`dist/index.html`), done.
 *
 * Every build first says `saw: <instructions>,` (the workspace's `history.txt`: the instructions of
 * the builds whose workspace it continues), then appends its own instruction to that file.
 *
 * Readiness is a state, never a clock: an API node is ready once it printed its listening line and
 * `GET /healthz` answers 200; a worker once it printed `mobile-builder-mcp <version> worker
 * <runner id> ready` and its `/healthz` answers 200. Teardown kills every node's group, then any
 * build group a killed worker left behind, then drops the database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import { isGroupAlive } from '../../src/workflows/process-groups.js';
import { BIN, httpClient, runCommand, tempDir, waitFor } from '../helpers.js';
import { createTestDatabase, type TestDatabase } from '../setup/pg-database.js';

/** How long a node may take to print its ready line and answer `/healthz` on a busy 2-core machine. */
const START_TIMEOUT_MS = 45_000;

/** The plan every token gets unless a test names another: limits a polling test never meets. */
const POLLING_PLAN = 'polling';

/** A plan whose project cap is small enough to reach under concurrency: 5 projects, no other limit in the way. */
export const CAPPED_PLAN = 'capped';

/** A plan whose running bound (2 workflows at once) several workers could pass together. */
export const BOUNDED_PLAN = 'bounded';

/**
 * Plans of every node (`--plans`): `polling` is generous; `capped` allows 5 projects; `bounded`
 * runs 2 workflows of a user at once; `free` keeps the spec's limits (100 requests a minute, 10
 * creations an hour, 100 projects).
 */
const PLANS = {
  [POLLING_PLAN]: {
    requestsPerMinute: 1_000_000,
    projectCreationsPerHour: 1_000_000,
    maxProjects: 1_000_000,
    maxRunningWorkflows: 1_000,
    maxQueuedWorkflows: 1_000,
  },
  [CAPPED_PLAN]: { requestsPerMinute: 1_000_000, projectCreationsPerHour: 1_000_000, maxProjects: 5 },
  [BOUNDED_PLAN]: {
    requestsPerMinute: 1_000_000,
    projectCreationsPerHour: 1_000_000,
    maxProjects: 1_000,
    maxRunningWorkflows: 2,
    maxQueuedWorkflows: 1_000,
  },
};

/**
 * The probe builder's shell script (see the file comment). `PROBE_NODE` and `PROBE_DIR` come
 * from the node's builder config (`env`): a build's environment holds nothing of its server's.
 */
const PROBE_SCRIPT = `
echo "$PROBE_NODE $$ $SVC_WORKFLOW_ID $SVC_WORKFLOW_KIND" >> "$PROBE_DIR/builds.log"
touch history.txt
echo "saw: $(tr '\\n' ',' < history.txt)"
echo "$SVC_INSTRUCTION" >> history.txt
case "$SVC_INSTRUCTION" in
  *hold:*)
    tag=\${SVC_INSTRUCTION#*hold:}; tag=\${tag%% *}
    echo $$ > "$PROBE_DIR/$SVC_WORKFLOW_ID.pid.tmp" && mv "$PROBE_DIR/$SVC_WORKFLOW_ID.pid.tmp" "$PROBE_DIR/$SVC_WORKFLOW_ID.pid"
    echo "holding $tag"
    # Also ends once the test's folder is gone: a build nobody killed never outlives its test for long.
    while [ ! -e "$PROBE_DIR/release-$tag" ] && [ -d "$PROBE_DIR" ]; do sleep 0.05; done ;;
esac
case "$SVC_INSTRUCTION" in
  *bulk:*)
    mb=\${SVC_INSTRUCTION#*bulk:}; mb=\${mb%% *}
    mkdir -p dist && head -c $((mb * 1048576)) /dev/urandom > bulk.bin && cp bulk.bin dist/bulk.bin ;;
esac
case "$SVC_INSTRUCTION" in
  *ask*)
    echo '::ask app_id {"prompt":"App identifier?","pattern":"[a-z]+([.][a-z]+)+"}'
    read -r answer
    echo "::result answered $answer" ;;
esac
mkdir -p dist && printf '<!doctype html><title>probe</title><p>%s</p>\\n' "$SVC_WORKFLOW_ID" > dist/index.html
echo "::step 1/1 Probe"
echo "::preview web dist"
echo "::result built by the probe"
`;

/** One node's process. */
export interface NodeProcess {
  /** `api-1`, `worker-2`...: also its `SVC_RUNNER_HOST`, so its runner ids start with `<name>:`. */
  name: string;
  role: 'api' | 'worker';
  child: ChildProcess;
  /** The node's pid (also its process group's id). */
  pid: number;
  /** Its data dir (workspaces, caches). */
  dataDir: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` to its whole process group (no-op once it exited). */
  signal(signal: NodeJS.Signals): void;
  /** Sends `signal` (SIGTERM by default) to the group and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves when the process exited. */
  exited: Promise<number | null>;
  /** True until it exited. */
  running(): boolean;
  /** `GET /healthz` of this node: its status and JSON body. */
  health(): Promise<{ status: number; body: any }>;
}

/** An API node: MCP, the console and the artifact origin over HTTP. */
export interface ApiNode extends NodeProcess {
  role: 'api';
  /** `http://127.0.0.1:<port>`: MCP at `/mcp`, the console at `/`. */
  url: string;
  mcpUrl: string;
  /** The artifact origin's listener, `http://127.0.0.1:<port>`. */
  artifactsUrl: string;
  /** A connected SDK client over streamable HTTP with `token` (closed at teardown). */
  client(token: string): Promise<Client>;
}

/** A build worker: engine and builder, `/healthz` on its health port. */
export interface WorkerNode extends NodeProcess {
  role: 'worker';
  /** Its runner id, from the ready line: `<name>:<pid>:<nonce>`. */
  runnerId: string;
  /** `http://127.0.0.1:<health port>`. */
  healthUrl: string;
}

/** One line of the probe's `builds.log`: which node ran which workflow. */
interface BuildRecord {
  node: string;
  pid: number;
  workflowId: string;
  kind: string;
}

/** Options of a node beyond the cluster's. */
interface NodeOptions {
  /** Extra command-line arguments. */
  args?: string[];
  /** Extra environment. */
  env?: Record<string, string>;
}

/** Options of the whole deployment. */
export interface ClusterOptions {
  apiNodes?: number;
  workers?: number;
  /** `--lease-ms` of every node (default 1500: takeovers in tests stay short). */
  leaseMs?: number;
  /** `--max-concurrent-workflows` of every worker (default 2). */
  workerSlots?: number;
  /** Extra arguments of every API node / every worker. */
  apiArgs?: string[];
  workerArgs?: string[];
  /** The database (default: a copy of the run's template, `createTestDatabase`); dropped at close. */
  db?: TestDatabase;
}

/** A running multi-node deployment on one test database. */
export interface Cluster {
  db: TestDatabase;
  /** The temp folder of every node's data dir, the probe's files and the plans. */
  root: string;
  api: ApiNode[];
  workers: WorkerNode[];
  /** Starts another API node (`api-<n>`). */
  startApi(options?: NodeOptions): Promise<ApiNode>;
  /** Starts another worker (`worker-<n>`). */
  startWorker(options?: NodeOptions): Promise<WorkerNode>;
  /** Runs a CLI command on the cluster's database URL; resolves with its status and output. */
  cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }>;
  /** An API token made by `token create` for `user` (put on `plan`, default `polling`, by `user set-plan`). */
  token(user: string, plan?: string): Promise<string>;
  /** The same, with the token's id (what `token revoke` takes). */
  createToken(user: string, plan?: string): Promise<{ token: string; id: string }>;
  /** Rows of a query on the cluster's database (a pool of the test's own). */
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  /** The builds the probe recorded so far, in the order they started. */
  builds(): BuildRecord[];
  /** The pid of the probe build of `workflowId` once it holds (waits for its pid file). */
  buildPid(workflowId: string): Promise<number>;
  /** Lets every probe build holding `tag` finish. */
  release(tag: string): void;
  /** The warnings and errors every node logged so far (JSON log lines at level 40 and up), by node: printed when a test fails. */
  problems(): string;
  /** Kills every node and leftover build, closes the clients and the pool, drops the database. */
  close(): Promise<void>;
}

/**
 * Starts a deployment on a database of its own: `apiNodes` API nodes (default 2) and `workers`
 * workers (default 2), in parallel, each waited for until ready.
 * @throws Error with the node's stderr when one exits or is not ready in time (what started is torn down)
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const db = options.db ?? (await createTestDatabase());
  const root = tempDir('mbm-multinode-');
  const probeDir = join(root, 'probe');
  mkdirSync(probeDir);
  const plansFile = join(root, 'plans.json');
  writeFileSync(plansFile, JSON.stringify(PLANS));
  const probeFile = join(root, 'probe.sh');
  writeFileSync(probeFile, PROBE_SCRIPT);
  const leaseMs = String(options.leaseMs ?? 1500);
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // A pooled connection still closing when the database is dropped (WITH FORCE) gets the server's
  // 57P01 as an 'error' event: without a listener that is an uncaught error of the test run.
  pool.on('error', () => undefined);
  const nodes: NodeProcess[] = [];
  const clients: Client[] = [];
  let apiCount = 0;
  let workerCount = 0;

  const common = (name: string) => {
    const dataDir = join(root, name);
    mkdirSync(dataDir);
    const config = join(root, `${name}.builder.json`);
    // Sourced (`.`), not run by a second shell: the build's shell is its process group's leader, so
    // the pid the probe records (`$$`) is the group the worker kills.
    writeFileSync(
      config,
      JSON.stringify({
        build: { command: `. ${probeFile}` },
        deploy: { command: `. ${probeFile}` },
        env: { PROBE_NODE: name, PROBE_DIR: probeDir },
        killGraceMs: 300,
      }),
    );
    const args = [
      '--database-url',
      db.url,
      '--data-dir',
      dataDir,
      '--builder',
      'command',
      '--builder-config',
      config,
      '--no-build-sandbox',
      '--plans',
      plansFile,
      '--lease-ms',
      leaseMs,
      '--log-level',
      'info',
    ];
    return { dataDir, args };
  };

  const cluster: Cluster = {
    db,
    root,
    api: [],
    workers: [],
    async startApi(extra = {}) {
      const name = `api-${++apiCount}`;
      const { dataDir, args } = common(name);
      const node = launch(
        name,
        'api',
        dataDir,
        [
          'serve',
          '--http',
          '--role',
          'api',
          '--host',
          '127.0.0.1',
          '--port',
          '0',
          ...args,
          ...(options.apiArgs ?? []),
          ...(extra.args ?? []),
        ],
        extra.env,
      );
      nodes.push(node);
      const lines = await waitFor(
        () =>
          node.running()
            ? /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp, artifacts on (http:\/\/127\.0\.0\.1:\d+)/.exec(
                node.stderr(),
              )
            : fail(node, 'exited before listening'),
        START_TIMEOUT_MS,
        `${name} to listen (stderr: ${node.stderr()})`,
      );
      const url = lines[1]!;
      const api: ApiNode = {
        ...node,
        role: 'api',
        url,
        mcpUrl: `${url}/mcp`,
        artifactsUrl: lines[2]!,
        health: () => health(url),
        async client(token) {
          const client = await httpClient(`${url}/mcp`, token);
          clients.push(client);
          return client;
        },
      };
      await waitFor(
        async () =>
          (await api.health().catch(() => ({ status: 0 }))).status === 200 ||
          (!node.running() && fail(node, 'exited before /healthz answered 200')),
        START_TIMEOUT_MS,
        `${name}'s /healthz to answer 200`,
      );
      cluster.api.push(api);
      return api;
    },
    async startWorker(extra = {}) {
      const name = `worker-${++workerCount}`;
      const { dataDir, args } = common(name);
      const slots = String(options.workerSlots ?? 2);
      const node = launch(
        name,
        'worker',
        dataDir,
        [
          'worker',
          '--health-port',
          '0',
          '--max-concurrent-workflows',
          slots,
          ...args,
          ...(options.workerArgs ?? []),
          ...(extra.args ?? []),
        ],
        extra.env,
      );
      nodes.push(node);
      const runnerId = await waitFor(
        () =>
          node.running() ? / worker (\S+) ready/.exec(node.stderr())?.[1] : fail(node, 'exited before its ready line'),
        START_TIMEOUT_MS,
        `${name}'s ready line (stderr: ${node.stderr()})`,
      );
      const healthUrl = await waitFor(() => healthUrlOf(node), START_TIMEOUT_MS, `${name}'s health port`);
      const worker: WorkerNode = { ...node, role: 'worker', runnerId, healthUrl, health: () => health(healthUrl) };
      await waitFor(
        async () =>
          (await worker.health().catch(() => ({ status: 0 }))).status === 200 ||
          (!node.running() && fail(node, 'exited before /healthz answered 200')),
        START_TIMEOUT_MS,
        `${name}'s /healthz to answer 200`,
      );
      cluster.workers.push(worker);
      return worker;
    },
    cli: (args) =>
      runCommand(process.execPath, [BIN, ...args, '--database-url', db.url, '--data-dir', join(root, 'cli')], {
        timeoutMs: 60_000,
      }),
    async createToken(user, plan = POLLING_PLAN) {
      const made = await cluster.cli(['token', 'create', '--user', user]);
      if (made.status !== 0) throw new Error(`token create failed: ${made.stderr}`);
      if (plan !== 'free') {
        const set = await cluster.cli(['user', 'set-plan', user, plan, '--plans', plansFile]);
        if (set.status !== 0) throw new Error(`user set-plan failed: ${set.stderr}`);
      }
      const id = /Created token (\S+) for user/.exec(made.stdout)?.[1];
      if (!id) throw new Error(`token create printed no id: ${made.stdout}`);
      return { token: made.stdout.trim().split('\n').at(-1)!, id };
    },
    token: async (user, plan) => (await cluster.createToken(user, plan)).token,
    async sql(text, params = []) {
      return (await pool.query(text, params)).rows;
    },
    builds() {
      const file = join(probeDir, 'builds.log');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [node, pid, workflowId, kind] = line.split(' ');
          return { node: node!, pid: Number(pid), workflowId: workflowId!, kind: kind! };
        });
    },
    buildPid: (workflowId) =>
      waitFor(
        () => {
          const file = join(probeDir, `${workflowId}.pid`);
          return existsSync(file) ? Number(readFileSync(file, 'utf8')) : null;
        },
        30_000,
        `the probe build of ${workflowId} to hold`,
      ),
    release(tag) {
      writeFileSync(join(probeDir, `release-${tag}`), '');
    },
    problems: () =>
      nodes
        .map((node) => {
          const lines = node
            .stderr()
            .split('\n')
            .filter((line) => /"level":(40|50|60)/.test(line));
          return lines.length === 0
            ? ''
            : `--- ${node.name}${node.running() ? '' : ' (exited)'}\n${lines.join('\n')}\n`;
        })
        .join(''),
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      for (const node of nodes) {
        if (!node.running()) continue;
        node.signal('SIGCONT');
        node.signal('SIGKILL');
      }
      await Promise.all(nodes.map((n) => n.exited));
      // Builds a killed worker left running (unsandboxed builds outlive their server until a
      // node of the same runner host kills their group).
      for (const name of existsSync(probeDir) ? readdirSync(probeDir) : []) {
        if (!name.endsWith('.pid')) continue;
        const pgid = Number(readFileSync(join(probeDir, name), 'utf8'));
        if (pgid > 1 && isGroupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
      }
      await pool.end();
      await db.drop();
      rmSync(root, { recursive: true, force: true });
    },
  };

  try {
    const apiNodes = options.apiNodes ?? 2;
    const workers = options.workers ?? 2;
    // One at a time: node names follow start order, and a busy machine starts them no slower.
    for (let i = 0; i < apiNodes; i++) await cluster.startApi();
    for (let i = 0; i < workers; i++) await cluster.startWorker();
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

/** Spawns the bin as a detached process group with its stderr captured. */
function launch(
  name: string,
  role: 'api' | 'worker',
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): NodeProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SVC_RUNNER_HOST: name, ...env },
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.resume();
  let alive = true;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      alive = false;
      resolve(code);
    }),
  );
  const signal = (sig: NodeJS.Signals) => {
    if (!alive) return;
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // Gone meanwhile.
    }
  };
  return {
    name,
    role,
    child,
    pid: child.pid!,
    dataDir,
    stderr: () => err,
    signal,
    async stop(sig = 'SIGTERM') {
      signal(sig);
      return exited;
    },
    exited,
    running: () => alive,
    health: () => Promise.reject(new Error('no health URL yet')),
  };
}

function fail(node: NodeProcess, what: string): never {
  throw new Error(`${node.name} ${what}: ${node.stderr()}`);
}

async function health(base: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  return { status: res.status, body };
}

/**
 * A worker's health URL: the one its stderr names (`…/healthz`), else the one loopback port its
 * process listens on (from `/proc`: its sockets' inodes in the kernel's table of listening TCP
 * sockets).
 */
function healthUrlOf(node: NodeProcess): string | null {
  const named = /(http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(node.stderr())?.[1];
  if (named) return named;
  const ports = listeningPorts(node.pid);
  return ports.length === 1 ? `http://127.0.0.1:${ports[0]}` : null;
}

/** TCP ports process `pid` listens on (IPv4 and IPv6), read from `/proc`. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // Closed meanwhile.
      }
    }
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is field 1 (`ADDR:PORT` in hex), st is field 3 (0A = LISTEN), inode field 9.
      if (fields[3] === '0A' && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}
