/**
 * How a build's child process is confined (docs/security.md "Security", "The build sandbox"): the argv that
 * wraps it in bubblewrap (`bwrap`) and `prlimit`, and the environment it gets, built from an
 * allow-list. Only `process-runner.ts` turns this into a running process.
 *
 * Inside the sandbox a process sees `/usr` (and the `/bin`, `/lib*` links), a few files of `/etc`
 * (name service, TLS roots, time zone), the folder of the running `node`, a private `/tmp` and
 * `$HOME` (tmpfs, gone with the process), a fresh `/proc` and `/dev`, and only the paths its caller
 * binds (the workspace read-write, the toolchain read-only, ...). Every namespace is unshared
 * (user, mount, PID, IPC, UTS, cgroup, network); `network: true` keeps the host's network (the
 * toolchain install alone). It holds no capability. `--die-with-parent` ends it with the server.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

/** Bounds of one sandboxed process (each of its processes, for the per-process ones). */
interface ProcessLimits {
  /**
   * Data memory of one process, bytes (RLIMIT_DATA: heap and other private writable mappings).
   * Not RLIMIT_AS: Node's WebAssembly (undici's HTTP parser, used by the Expo CLI) reserves about
   * 10 GiB of address space per instance and fails under any useful address-space bound.
   */
  memoryBytes: number;
  /** Processes and threads of the user running the server, counted machine-wide (RLIMIT_NPROC; root is exempt). */
  processes: number;
  /** Largest file one process may write, bytes (RLIMIT_FSIZE). */
  fileSizeBytes: number;
  /** CPU time of one process, seconds (RLIMIT_CPU). */
  cpuSeconds: number;
}

/**
 * The default bounds. 4 GiB of data memory per process: a real Expo export (Metro and its
 * workers on Node 20) passes with 1 GiB (measured: docs/security.md "The build sandbox"), so this leaves
 * room for big apps; 10 min of CPU per process like the step timeout; 1 GiB per file.
 */
const DEFAULT_LIMITS: ProcessLimits = {
  memoryBytes: 4 * 1024 ** 3,
  processes: 4096,
  fileSizeBytes: 1024 ** 3,
  cpuSeconds: 600,
};

/** Paths bound into the sandbox at the same place; every other path of the machine is absent. */
export interface SandboxBinds {
  /** Read-write (a workspace, a toolchain being installed, the Metro cache). */
  rw?: readonly string[];
  /** Read-only (the toolchain, an operator's tools). */
  ro?: readonly string[];
}

/** Which sandbox this server's builds run in. */
export interface BuildSandbox {
  /** `bubblewrap`: every child in `bwrap`; `none`: children run as the server's user, unconfined. */
  readonly kind: 'bubblewrap' | 'none';
  /** Why there is none (`bwrap not found`, `turned off with --no-build-sandbox`). */
  readonly reason?: string;
  /** Absolute path of `bwrap` (with `bubblewrap`). */
  readonly bwrap?: string;
}

/** No sandbox, by the operator's choice (`--no-build-sandbox`). */
export const SANDBOX_TURNED_OFF: BuildSandbox = { kind: 'none', reason: 'turned off with --no-build-sandbox' };

/** What the runner spawns: the wrapped argv and the environment. */
export interface SandboxLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/** What to confine: argv, cwd, environment, binds, network and limits (the runner's options extend it). */
export interface SandboxRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  /** Variables added to the allow-listed base environment (they win over it). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Names copied from the server's environment when set (for example proxy settings). */
  inheritEnv?: readonly string[];
  binds?: SandboxBinds;
  /** Keep the host's network (default false: no network at all). */
  network?: boolean;
  /** Bounds; missing ones take `DEFAULT_LIMITS`. */
  limits?: Partial<ProcessLimits>;
}

/** `$HOME` inside the sandbox (a private tmpfs). */
const SANDBOX_HOME = '/home/build';
/** Names always copied from the server's environment when set; nothing else is (never `SVC_*`). */
const BASE_ENV = ['LANG', 'LC_ALL', 'LC_CTYPE', 'TZ'];
/** Files and folders of `/etc` a build needs (name service, TLS roots, time zone, linker cache). */
const ETC_FILES = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/localtime',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  // Fonts (a preview screenshot renders text) and Debian chromium's wrapper settings.
  '/etc/fonts',
  '/etc/chromium.d',
];
const PRLIMIT = '/usr/bin/prlimit';

let detected: BuildSandbox | undefined;

/**
 * Whether bubblewrap works here: runs `bwrap --unshare-all ... true` once (cached). False on
 * macOS, without `bwrap`, or in a container that forbids user namespaces.
 */
export function detectBuildSandbox(): BuildSandbox {
  if (detected) return detected;
  if (process.platform !== 'linux')
    return (detected = { kind: 'none', reason: `bubblewrap needs Linux (this is ${process.platform})` });
  const bwrap = onPath('bwrap');
  if (!bwrap) return (detected = { kind: 'none', reason: 'bwrap (bubblewrap) is not installed' });
  const probe = spawnSync(bwrap, [...rootArgs(false), '--', '/bin/sh', '-c', 'exit 0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
    env: {},
  });
  if (probe.error)
    return (detected = {
      kind: 'none',
      reason: `bwrap could not start (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message})`,
    });
  if (probe.status !== 0) {
    const why = probe.stderr.toString('utf8').trim().split('\n')[0] || `exit ${probe.status}`;
    return (detected = { kind: 'none', reason: `bwrap fails here (${why}); user namespaces may be disabled` });
  }
  return (detected = { kind: 'bubblewrap', bwrap });
}

/** The first executable `name` in the server's PATH, or null. */
function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The argv and environment that run `request` in `sandbox`, bounded by `prlimit` when it exists.
 * Without a sandbox the environment is still the allow-list, and the limits still apply.
 */
export function sandboxLaunch(request: SandboxRequest, sandbox: BuildSandbox): SandboxLaunch {
  const limits = { ...DEFAULT_LIMITS, ...request.limits };
  const env = childEnvironment(request, sandbox);
  let argv = [request.file, ...request.args];
  if (existsSync(PRLIMIT)) {
    argv = [
      PRLIMIT,
      `--data=${limits.memoryBytes}`,
      `--nproc=${limits.processes}`,
      `--fsize=${limits.fileSizeBytes}`,
      `--cpu=${limits.cpuSeconds}`,
      '--',
      ...argv,
    ];
  }
  if (sandbox.kind === 'none') return { file: argv[0]!, args: argv.slice(1), env };
  const args = [...rootArgs(request.network === true)];
  for (const path of request.binds?.ro ?? []) args.push(...bindArgs('--ro-bind', path));
  for (const path of request.binds?.rw ?? []) args.push(...bindArgs('--bind', path));
  args.push('--chdir', request.cwd, '--', ...argv);
  return { file: sandbox.bwrap ?? 'bwrap', args, env };
}

/**
 * The environment of a child: `PATH`, `HOME`, `TMPDIR` and the locale, the names the request
 * inherits, then its own additions. The server's other variables (its `SVC_*` settings and
 * `SVC_API_TOKEN` among them) never reach a child.
 */
function childEnvironment(request: SandboxRequest, sandbox: BuildSandbox): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...(request.inheritEnv ?? [])]) {
    const value = process.env[name];
    if (value !== undefined && !name.startsWith('SVC_')) env[name] = value;
  }
  const nodeBin = dirname(process.execPath);
  if (sandbox.kind === 'none') {
    env.PATH = process.env.PATH ?? `${nodeBin}:/usr/local/bin:/usr/bin:/bin`;
    env.HOME = process.env.HOME ?? homedir();
  } else {
    env.PATH = `${nodeBin}:/usr/local/bin:/usr/bin:/bin`;
    env.HOME = SANDBOX_HOME;
    env.TMPDIR = '/tmp';
  }
  for (const [name, value] of Object.entries(request.env ?? {})) {
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** The sandbox's fixed part: namespaces, the system folders, private /tmp and home. */
function rootArgs(network: boolean): string[] {
  const args = ['--unshare-all', ...(network ? ['--share-net'] : []), '--die-with-parent'];
  // A server run as root would otherwise leave its builds root's capabilities inside their
  // namespaces (an unprivileged bwrap keeps none); without them the Expo CLI's LAN probe, a DHCP
  // request from UDP port 68, fails at once instead of waiting 250 ms for a reply per export
  // (docs/performance.md "Goal 3.5: the `expo` builder against a bare `npx expo export`").
  if (process.getuid?.() === 0) args.push('--cap-drop', 'ALL');
  args.push('--ro-bind', '/usr', '/usr');
  for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    const info = lstatOrNull(top);
    if (!info) continue;
    if (info.isSymbolicLink()) args.push('--symlink', readlinkSync(top), top);
    else if (info.isDirectory()) args.push('--ro-bind', top, top);
  }
  for (const path of ETC_FILES) if (existsSync(path)) args.push('--ro-bind', path, path);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', '/home', '--dir', SANDBOX_HOME);
  // The running node (it may live outside /usr: /opt/node, ~/.nvm/versions/..., the Node 24 that
  // scripts/with-node-24.sh installs under ~/.cache): bound after the private /tmp and /home, which
  // would hide it, so that `npm` and the Expo CLI run on it and not on an older node in /usr.
  const nodePrefix = dirname(dirname(realpathSync(process.execPath)));
  if (!nodePrefix.startsWith('/usr/') && nodePrefix !== '/usr') args.push('--ro-bind', nodePrefix, nodePrefix);
  return args;
}

/** `--bind real path`: the path as the server names it, backed by its real location. */
function bindArgs(flag: '--bind' | '--ro-bind', path: string): string[] {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return [];
  }
  return [flag, real, path];
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Paths the sandbox shows (or makes) by itself; never bound again from a command line (a device bound read-only stops working). */
const SYSTEM_PATH = /^\/(dev|proc|sys|usr|bin|sbin|lib|lib32|lib64|libx32)(\/|$)/;

/**
 * The absolute paths a shell command line names that exist on this machine (`/opt/agent/run.sh`,
 * `--config=/etc/agent.json` is not split out): an operator's command sees its own files read-only.
 */
export function pathsNamedIn(commandLine: string): string[] {
  const found = new Set<string>();
  for (const word of commandLine.split(/[\s;&|()<>'"]+/)) {
    if (!word.startsWith('/') || word.length < 2 || SYSTEM_PATH.test(word)) continue;
    if (existsSync(word)) found.add(word);
  }
  return [...found];
}

/** The npm cache folder of the server's user (bound read-write during a toolchain install). */
export function npmCacheDir(): string {
  return process.env.npm_config_cache ?? join(process.env.HOME ?? homedir(), '.npm');
}
