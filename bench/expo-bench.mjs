// `npm run bench:expo`: the `expo` builder on this machine, in one run, through the real bin over
// HTTP: toolchain install of every default SDK (npm install from the shipped lockfiles into a fresh
// data dir; npm's own cache is used as it is), new workspace, first build of a first and of a
// second project, warm rebuild after a one-line edit, deploy (cold, then warm; native bundles for
// every served SDK), extra disk per project, and peak RSS of the server and of the export process
// tree, and a warm rebuild with the build sandbox (bubblewrap) against one without
// (--no-build-sandbox), alternating servers on the same data dir, three each.
//
// Baselines in the same run: a bare `expo export` of the same app (a copy of the project's files
// with node_modules linked to the same toolchain, Expo's own Metro cache in a fresh TMPDIR, no
// sandbox, no type check): cold web export against the first build, warm web export after the same
// one-line edit against the warm rebuild (three of each, alternating; medians), and the bare
// exports a deploy needs (iOS + Android for each served SDK, cold, and a warm web export) against
// the first deploy. Each is printed as a ratio.
// Prints a table, goal 3.5's lines (bench/goal-lines.mjs: each ratio against 1.15x, ok or short),
// and writes bench/results/expo-<time>.json, whose newest `npm run bench` shows.
//
// Options (env): BENCH_KEEP=1 keeps the data dir; BENCH_EXPO_BUILDS_ONLY=1 stops after the warm
// rebuild comparison (no deploys, no sandbox comparison, no results file: goal 3.5's deploy line
// is then not measured).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expoGoalLines, goalLines } from './goal-lines.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
const dataDir = mkdtempSync(join(tmpdir(), 'mbm-expo-bench-'));
const results = { date: new Date().toISOString() };
const seconds = (ms) => Math.round(ms / 100) / 10;

// 1. Toolchain install.
let t = Date.now();
const SDKS = [58, 54];
const install = spawnSync(
  process.execPath,
  [BIN, 'toolchain', 'install', '--sdk', SDKS.join(','), '--data-dir', dataDir],
  { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
);
if (install.status !== 0) throw new Error(`toolchain install failed: ${install.stdout}`);
results.toolchainInstallS = seconds(Date.now() - t);
results.toolchainDiskMiB = duMiB(join(dataDir, 'toolchains'));

// 2. The server (HTTP, expo builder), with a sampler of its and its children's memory.
const token = execFileSync(process.execPath, [BIN, 'token', 'create', '--user', 'bench', '--data-dir', dataDir], {
  encoding: 'utf8',
})
  .trim()
  .split('\n')
  .at(-1);
// The benchmark polls its sessions: give its user a plan whose request rate it never meets.
const plans = join(dataDir, 'plans.json');
writeFileSync(
  plans,
  JSON.stringify({ bench: { requestsPerMinute: 1_000_000, projectCreationsPerHour: 10, maxProjects: 10 } }),
);
execFileSync(process.execPath, [BIN, 'user', 'set-plan', 'bench', 'bench', '--plans', plans, '--data-dir', dataDir]);
/** Starts `serve --http` on the data dir (extra arguments: `--no-build-sandbox`) and waits for its line. */
async function startServer(extra = []) {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--http',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--builder',
      'expo',
      '--agent',
      'none',
      '--plans',
      plans,
      '--log-level',
      'warn',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  // Kept beside the store (BENCH_KEEP=1 keeps both): what the server said, warnings and up.
  const log = createWriteStream(join(dataDir, 'server.log'), { flags: 'a' });
  child.stderr.on('data', (d) => {
    err += d.toString();
    log.write(d);
  });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 180_000);
    const poll = setInterval(() => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp.*/.exec(err);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(m);
      }
    }, 50);
  });
  return { child, url: `http://127.0.0.1:${line[1]}/mcp`, line: line[0] };
}

/** Stops a server started by `startServer` and waits for it to exit. */
async function stopServer(s) {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.kill('SIGTERM');
  await exited;
}

let current = await startServer();
results.startLine = current.line.replace(/.*; /, '');
const server = current.child;
let mcpUrl = current.url;
let peakExportTreeMiB = 0;
let peakExportProcessMiB = 0;
const sampler = setInterval(() => {
  const tree = descendants(server.pid);
  let sum = 0;
  for (const pid of tree) {
    const rss = rssMiB(pid);
    sum += rss;
    peakExportProcessMiB = Math.max(peakExportProcessMiB, rss);
  }
  peakExportTreeMiB = Math.max(peakExportTreeMiB, sum);
}, 200);

let id = 1;
async function tool(name, args) {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await res.json();
  if (!body.result || body.result.isError) throw new Error(`${name}: ${JSON.stringify(body)}`);
  return body.result.structuredContent;
}

/** Sends an instruction, answers the app identifier question if asked, and returns the finished workflow. */
async function run(projectId, message, kind) {
  await tool('svc_send_message', { projectId, message, kind });
  for (;;) {
    const s = await tool('svc_get_session', { projectId });
    if (s.pendingQuestion)
      await tool('svc_send_message', {
        projectId,
        message: 'com.example.bench',
        questionId: s.pendingQuestion.questionId,
      });
    else if (!s.hasActiveWorkflows) {
      if (s.lastWorkflow.status !== 'completed')
        throw new Error(`${kind} failed: ${JSON.stringify(s.lastWorkflow.error)}`);
      return s.lastWorkflow;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
const duration = (w) => seconds(Date.parse(w.finishedAt) - Date.parse(w.startedAt));

/**
 * Seconds of each step of finished workflow `w` of project `projectId`, from its `Step k/n: ...`
 * progress messages to the next one (the last to the workflow's end), keyed by the step's name.
 */
async function stepSeconds(projectId, w) {
  const { messages } = await tool('svc_get_messages', { projectId, limit: 500 });
  const steps = messages.filter((m) => m.workflowId === w.id && /^Step \d+\/\d+: /.test(m.content));
  const ends = [...steps.slice(1).map((m) => m.createdAt), w.finishedAt];
  return Object.fromEntries(
    steps.map((m, i) => [
      m.content.replace(/^Step \d+\/\d+: /, ''),
      seconds(Date.parse(ends[i]) - Date.parse(m.createdAt)),
    ]),
  );
}
/** The middle of three figures. */
const median = (list) => [...list].sort((a, b) => a - b)[1];
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
/** Thrown to stop after the warm rebuilds (BENCH_EXPO_BUILDS_ONLY). */
const BUILDS_ONLY = process.env.BENCH_EXPO_BUILDS_ONLY ? Symbol('builds only') : null;

try {
  // 3. A new workspace, alone (the same code the first build runs).
  const { ExpoWorkspace } = await import(join(root, 'dist', 'builders', 'expo', 'workspace.js'));
  const { toolchainsFor } = await import(join(root, 'dist', 'builders', 'expo', 'index.js'));
  const probe = join(dataDir, 'probe-workspace');
  t = performance.now();
  await new ExpoWorkspace(probe, toolchainsFor({ dataDir })[0]).ensure({ name: 'Probe' });
  results.newWorkspaceS = Math.round(performance.now() - t) / 1000;
  results.newWorkspaceMiB = duMiB(probe);
  rmSync(probe, { recursive: true, force: true });

  const first = await tool('svc_create_project', { name: 'Bench One' });
  results.firstBuildS = duration(await run(first.id, 'A habit tracker, make it green', 'build'));
  const bare = bareApp(first.id);
  results.bareColdWebExportS = await bare.export(SDKS[0], ['web']);
  const second = await tool('svc_create_project', { name: 'Bench Two' });
  results.secondProjectFirstBuildS = duration(await run(second.id, 'A recipe box in dark mode', 'build'));
  // Warm rebuilds and bare warm exports alternate, three each, each after its own one-line edit
  // (the bare copy takes the edit): the medians are compared, so a burst of load on a shared
  // machine during one run does not decide the ratio.
  results.warmRebuildRunsS = [];
  results.bareWarmWebExportRunsS = [];
  for (const accent of ['#ff8800', '#ff8801', '#ff8802']) {
    results.warmRebuildRunsS.push(duration(await run(first.id, `accent ${accent}`, 'build')));
    bare.refresh();
    results.bareWarmWebExportRunsS.push(await bare.export(SDKS[0], ['web']));
  }
  // How many of them skipped the type check (docs/builders.md "Skipping the type check").
  const said = (await tool('svc_get_messages', { projectId: first.id, limit: 500 })).messages;
  results.warmRebuildsSkippingTypeCheck = said.filter((m) => m.content.startsWith('Type check skipped')).length;
  results.warmRebuildS = median(results.warmRebuildRunsS);
  results.bareWarmWebExportS = median(results.bareWarmWebExportRunsS);
  results.firstBuildRatio = ratio(results.firstBuildS, results.bareColdWebExportS);
  results.warmRebuildRatio = ratio(results.warmRebuildS, results.bareWarmWebExportS);
  if (BUILDS_ONLY) throw BUILDS_ONLY;
  const coldDeploy = await run(first.id, 'deploy', 'deploy');
  results.coldDeployS = duration(coldDeploy);
  results.coldDeployStepsS = await stepSeconds(first.id, coldDeploy);
  // The app identifier the deploy set is in app.json: the bare copy takes it too.
  bare.refresh();
  results.bareDeployExportRunsS = {};
  for (const [sdk, platforms] of [...SDKS.map((sdk) => [sdk, ['ios', 'android']]), [SDKS[0], ['web']]])
    results.bareDeployExportRunsS[`SDK ${sdk} ${platforms.join('+')}`] = await bare.export(sdk, platforms);
  results.bareDeployExportsS =
    Math.round(Object.values(results.bareDeployExportRunsS).reduce((sum, s) => sum + s, 0) * 10) / 10;
  results.warmDeployS = duration(await run(first.id, 'deploy again', 'deploy'));
  results.deployRatio = ratio(results.coldDeployS, results.bareDeployExportsS);
  process.stderr.write(`bench:expo so far: ${JSON.stringify(results)}\n`);
  results.diskPerProjectMiB = duMiB(join(dataDir, 'workspaces', second.id));
  results.serverPeakRssMiB = Math.round(
    Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024,
  );
  results.exportPeakProcessRssMiB = Math.round(peakExportProcessMiB);
  results.exportPeakTreeRssMiB = Math.round(peakExportTreeMiB);

  // The sandbox's cost: warm rebuilds of the same project, alternating a sandboxed server and an
  // unsandboxed one on the same data dir (one server at a time), three each; medians compared.
  clearInterval(sampler);
  const times = { sandboxed: [], unsandboxed: [] };
  for (let i = 0; i < 3; i++) {
    for (const mode of ['unsandboxed', 'sandboxed']) {
      await stopServer(current);
      current = await startServer(mode === 'unsandboxed' ? ['--no-build-sandbox'] : []);
      mcpUrl = current.url;
      times[mode].push(duration(await run(first.id, `accent #${mode === 'sandboxed' ? 'aa' : 'bb'}88${i}0`, 'build')));
    }
  }
  results.warmRebuildSandboxedS = times.sandboxed;
  results.warmRebuildUnsandboxedS = times.unsandboxed;
  results.sandboxOverheadPercent =
    Math.round(((median(times.sandboxed) - median(times.unsandboxed)) / median(times.unsandboxed)) * 1000) / 10;
} catch (error) {
  if (error !== BUILDS_ONLY) throw error;
} finally {
  clearInterval(sampler);
  await stopServer(current).catch(() => undefined);
  if (!process.env.BENCH_KEEP) setTimeout(() => rmSync(dataDir, { recursive: true, force: true }), 3000);
}

const rows = [
  [
    `toolchain install (npm install, SDK ${SDKS.join(' and ')})`,
    `${results.toolchainInstallS} s (${results.toolchainDiskMiB} MiB)`,
  ],
  ['new workspace', `${results.newWorkspaceS} s, ${results.newWorkspaceMiB} MiB`],
  [
    `first build, first project (SDK ${SDKS[0]}, cold Metro cache)`,
    `${results.firstBuildS} s = ${results.firstBuildRatio}x a bare cold web export (${results.bareColdWebExportS} s)`,
  ],
  ['first build, second project', `${results.secondProjectFirstBuildS} s`],
  [
    'warm rebuild after a one-line edit (median of 3)',
    `${results.warmRebuildS} s = ${results.warmRebuildRatio}x a bare warm web export (${results.bareWarmWebExportS} s); runs ${results.warmRebuildRunsS.join(' / ')} s against ${results.bareWarmWebExportRunsS.join(' / ')} s; ${results.warmRebuildsSkippingTypeCheck} of 3 skipped the type check`,
  ],
  [
    `deploy, first (cold native exports, SDK ${SDKS.join(' and ')})`,
    `${results.coldDeployS} s = ${results.deployRatio}x the bare exports it needs (${results.bareDeployExportsS} s)`,
  ],
  [
    'deploy, first: its steps',
    Object.entries(results.coldDeployStepsS ?? {})
      .map(([step, s]) => `${step} ${s} s`)
      .join('; '),
  ],
  [
    'deploy, first: the bare exports',
    Object.entries(results.bareDeployExportRunsS ?? {})
      .map(([what, s]) => `${what} ${s} s`)
      .join('; '),
  ],
  ['deploy, warm', `${results.warmDeployS} s`],
  ['extra disk per project (after one build)', `${results.diskPerProjectMiB} MiB`],
  ['peak RSS, server', `${results.serverPeakRssMiB} MiB`],
  [
    'peak RSS, largest export process / whole tree',
    `${results.exportPeakProcessRssMiB} / ${results.exportPeakTreeRssMiB} MiB`,
  ],
  ['builds', results.startLine],
  ['warm rebuild, sandboxed (3 runs)', `${results.warmRebuildSandboxedS?.join(' / ')} s`],
  ['warm rebuild, --no-build-sandbox (3 runs)', `${results.warmRebuildUnsandboxedS?.join(' / ')} s`],
  ['sandbox overhead (medians)', `${results.sandboxOverheadPercent} %`],
];
if (BUILDS_ONLY) {
  process.stderr.write(`bench:expo builds only: ${JSON.stringify(results)}\n`);
  rows.splice(0, rows.length, ...rows.filter(([, value]) => value !== '' && !value.includes('undefined')));
}
const width = Math.max(...rows.map((r) => r[0].length));
process.stdout.write(`\n${rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')}\n`);
const goals = goalLines();
expoGoalLines(goals, results);
goals.print('goal 3.5 (docs/performance.md "Round three"), each against its baseline measured in this run:');
if (!BUILDS_ONLY) mkdirSync(join(root, 'bench', 'results'), { recursive: true });
if (!BUILDS_ONLY)
  writeFileSync(
    join(root, 'bench', 'results', `expo-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
    `${JSON.stringify(results, null, 2)}\n`,
  );

/**
 * A bare copy of a project's app for baselines: its files (no git, no output) with node_modules
 * linked to an SDK's toolchain, exported with that toolchain's `expo export` as a person would run
 * `npx expo export`, Expo's own Metro cache in a TMPDIR of its own (cold at first, then warm).
 */
function bareApp(projectId) {
  const workspace = join(dataDir, 'workspaces', projectId);
  const base = mkdtempSync(join(tmpdir(), 'mbm-expo-bare-'));
  const tmp = join(base, 'tmp');
  mkdirSync(tmp);
  const copyFor = (sdk) => join(base, `app-${sdk}`);
  const refresh = () => {
    for (const sdk of SDKS) {
      const dir = copyFor(sdk);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      for (const entry of readdirSync(workspace)) {
        if (['.git', '.svc', 'node_modules', '.expo'].includes(entry)) continue;
        cpSync(join(workspace, entry), join(dir, entry), { recursive: true, verbatimSymlinks: true });
      }
      cpSync(join(root, 'toolchains', `expo-sdk-${sdk}`, 'package.json'), join(dir, 'package.json'));
      symlinkSync(join(dataDir, 'toolchains', `expo-sdk-${sdk}`, 'node_modules'), join(dir, 'node_modules'), 'dir');
    }
  };
  refresh();
  /**
   * Seconds one `expo export --platform ...` of the SDK's copy takes. Not a synchronous spawn: the
   * bench's event loop must go on meanwhile, or its HTTP client would reuse a keep-alive connection
   * the server closed during a long export (EPIPE on the next tool call).
   */
  const exportOnce = async (sdk, platforms) => {
    const started = Date.now();
    const cli = join(dataDir, 'toolchains', `expo-sdk-${sdk}`, 'node_modules', 'expo', 'bin', 'cli');
    const out = join(base, `out-${sdk}-${platforms.join('-')}`);
    const { SVC_METRO_CACHE_DIR: _unused, ...env } = process.env;
    const child = spawn(
      process.execPath,
      [cli, 'export', ...platforms.flatMap((p) => ['--platform', p]), '--output-dir', out],
      {
        cwd: copyFor(sdk),
        env: { ...env, TMPDIR: tmp, EXPO_NO_TELEMETRY: '1', CI: '1', NODE_ENV: 'production' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
    const [code] = await once(child, 'exit');
    if (code !== 0) throw new Error(`bare expo export (SDK ${sdk}, ${platforms.join('+')}) failed: ${stderr}`);
    return seconds(Date.now() - started);
  };
  return { refresh, export: exportOnce };
}

function duMiB(path) {
  // du counts the workspace's own files; the node_modules symlink is not followed.
  const kb = Number(execFileSync('du', ['-sk', path], { encoding: 'utf8' }).split('\t')[0]);
  return Math.round((kb / 1024) * 10) / 10;
}

function descendants(pid) {
  const out = [];
  const stack = [pid];
  while (stack.length) {
    const parent = stack.pop();
    let children;
    try {
      children = readdirSync(`/proc/${parent}/task`)
        .map((task) => readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8'))
        .join(' ');
    } catch {
      continue;
    }
    for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
      out.push(child);
      stack.push(child);
    }
  }
  return out;
}

function rssMiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}
