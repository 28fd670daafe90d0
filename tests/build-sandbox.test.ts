/**
 * The build sandbox (docs/security.md "The build sandbox"): a build step that tries to read the store,
 * another project's workspace, the server's environment and the network finds nothing and holds
 * no capability; git in a workspace gets none of the server's environment; `serve --http` refuses
 * to run builds unconfined unless told to, and its start-up line says which.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { detectBuildSandbox } from '../src/builders/process-sandbox.js';
import { ExpoToolchain } from '../src/builders/expo/toolchain.js';
import { ExpoWorkspace } from '../src/builders/expo/workspace.js';
import { pruneMetroCache } from '../src/builders/expo/metro-cache.js';
import { spawnHttpServer } from './bin-helpers.js';
import {
  BIN,
  createProject,
  processesWith,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  type TestServer,
} from './helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

beforeAll(() => {
  // The sandbox is what these tests check: without bubblewrap they would prove nothing.
  expect(detectBuildSandbox(), 'bubblewrap must work on this machine (apt-get install bubblewrap)').toMatchObject({
    kind: 'bubblewrap',
  });
});

describe('build sandbox', () => {
  it('a build step that tries to read the store, another workspace, the server environment and the network finds nothing, and holds no capability', async () => {
    const dataDir = tempDir('mbm-sbx-');
    const secret = `secret-of-A-${Math.random().toString(36).slice(2)}`;
    const probe = [
      'echo "own=$(cat own.txt)"',
      'echo "store=$(head -c 64 "$DATA/mobile-builder.db" 2>&1 | tr -dc "[:print:]")"',
      'echo "listing=$(ls "$DATA" "$DATA/workspaces" 2>&1 | tr "\\n" " ")"',
      'for f in "$DATA"/workspaces/*/secret.txt; do echo "other=$(cat "$f" 2>&1)"; done',
      'echo "env=$(env | sort | tr "\\n" " ")"',
      'echo "procs=$(cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" " ")"',
      'echo "caps=$(grep CapEff /proc/self/status)"',
      "node -e \"fetch(require('fs').readFileSync('url.txt','utf8')).then(() => console.log('net=REACHED'), () => console.log('net=blocked'))\"",
      'echo probe-done',
    ].join('\n');
    const configFile = join(tempDir('mbm-sbx-config-'), 'builder.json');
    writeFileSync(configFile, JSON.stringify({ build: { command: probe }, env: { DATA: dataDir } }));
    process.env.SVC_API_TOKEN = 'svc_should_not_leak_env';
    process.env.SVC_OPERATOR_SETTING = 'operator-setting-should-not-leak';
    try {
      server = await startTestServer({ dataDir, builder: 'command', builderConfigFile: configFile });
    } finally {
      delete process.env.SVC_API_TOKEN;
      delete process.env.SVC_OPERATOR_SETTING;
    }
    const token = server.token('mallory');
    const victim = await createProject(server.mcpUrl, server.token('alice'), { name: 'Victim' });
    mkdirSync(join(dataDir, 'workspaces', victim.id), { recursive: true });
    writeFileSync(join(dataDir, 'workspaces', victim.id, 'secret.txt'), secret);
    const attacker = await createProject(server.mcpUrl, token, { name: 'Attacker' });
    const own = join(dataDir, 'workspaces', attacker.id);
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'own.txt'), 'own-file-readable');
    writeFileSync(join(own, 'url.txt'), server.mcpUrl);

    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: attacker.id, message: 'probe' });
    const done = await waitIdle(server.mcpUrl, token, attacker.id);
    expect(done.lastWorkflow.status).toBe('completed');
    const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
      projectId: attacker.id,
      limit: 500,
    });
    const output = messages.map((m: { content: string }) => m.content).join('\n');
    // It ran, and reads its own workspace...
    expect(output).toContain('own=own-file-readable');
    expect(output).toContain('probe-done');
    // ...and nothing else.
    expect(output).not.toContain('SQLite format');
    expect(output).toMatch(/store=.*No such file/);
    expect(output).not.toContain(secret);
    expect(output).not.toContain(victim.id);
    expect(output).not.toContain('svc_should_not_leak_env');
    expect(output).not.toContain('operator-setting-should-not-leak');
    expect(output).toContain('net=blocked');
    expect(output).not.toContain('net=REACHED');
    // No capability either, even when the server runs as root (its builds then drop them all).
    expect(output).toMatch(/caps=CapEff:\s+0{16}\b/);
  });

  it("git in a workspace runs without the server's environment (a hook sees no token)", async () => {
    const dataDir = tempDir('mbm-sbx-git-');
    const store = join(dataDir, 'mobile-builder.db');
    writeFileSync(store, 'SQLite format 3 pretend store');
    const workspace = new ExpoWorkspace(
      join(dataDir, 'workspaces', 'p1'),
      new ExpoToolchain(join(dataDir, 'toolchains'), 58),
    );
    await workspace.ensure({ name: 'Hooked' });
    const hook = join(workspace.dir, '.git', 'hooks', 'post-commit');
    writeFileSync(hook, `#!/bin/sh\nenv > hook-env.txt\ncat ${store} > hook-store.txt 2>&1\n`, { mode: 0o755 });
    writeFileSync(join(workspace.dir, 'App.tsx'), 'export default function App() { return null; }\n');
    process.env.SVC_API_TOKEN = 'svc_git_should_not_see';
    try {
      expect(await workspace.commit('change')).toBe(true);
    } finally {
      delete process.env.SVC_API_TOKEN;
    }
    const env = readFileSync(join(workspace.dir, 'hook-env.txt'), 'utf8');
    expect(env).toContain('GIT_');
    expect(env).not.toContain('svc_git_should_not_see');
    expect(env).not.toMatch(/^SVC_/m);
    expect(readFileSync(join(workspace.dir, 'hook-store.txt'), 'utf8')).not.toContain('SQLite format 3');
  });

  it("the toolchain's npm ci runs without the server's environment (its process environment holds no token)", async () => {
    // A registry that takes requests and never answers: npm ci waits on it while the test looks.
    let requests = 0;
    const registry = createServer(() => void requests++);
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    const dataDir = tempDir('mbm-sbx-npm-');
    const toolchain = new ExpoToolchain(join(dataDir, 'toolchains'), 58);
    const controller = new AbortController();
    const registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
    process.env.SVC_API_TOKEN = 'svc_npm_should_not_see';
    try {
      const ensuring = toolchain.ensure({
        signal: controller.signal,
        env: { npm_config_registry: registryUrl, npm_config_cache: join(dataDir, 'empty-npm-cache') },
      });
      ensuring.catch(() => undefined);
      await waitFor(() => requests > 0 || null, 60_000, 'npm ci to ask the registry');
      const installing = [
        ...new Set([...processesWith(join(dataDir, 'toolchains')), ...processesInside(join(dataDir, 'toolchains'))]),
      ];
      expect(installing.length).toBeGreaterThan(0);
      const environments = installing.map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'utf8');
        } catch {
          return '';
        }
      });
      expect(environments.some((env) => env.includes(`npm_config_registry=${registryUrl}`))).toBe(true);
      for (const env of environments) expect(env).not.toContain('svc_npm_should_not_see');
      controller.abort(new Error('test over'));
      await expect(ensuring).rejects.toThrow();
    } finally {
      delete process.env.SVC_API_TOKEN;
      registry.closeAllConnections();
      registry.close();
    }
  });

  it('a workspace keeps its newest 20 commits: older history is folded into one root commit and its objects deleted', async () => {
    const dataDir = tempDir('mbm-sbx-history-');
    const workspace = new ExpoWorkspace(
      join(dataDir, 'workspaces', 'p1'),
      new ExpoToolchain(join(dataDir, 'toolchains'), 58),
    );
    await workspace.ensure({ name: 'Long history' });
    const git = (...args: string[]) => spawnSync('git', args, { cwd: workspace.dir, encoding: 'utf8' }).stdout.trim();
    for (let i = 1; i <= 44; i++) {
      // A big file per commit, so that the folded history is visible in the repository's size.
      writeFileSync(
        join(workspace.dir, 'App.tsx'),
        `// build ${i}\n// ${Math.random().toString(36).repeat(20_000)}\nexport default function App() { return null; }\n`,
      );
      await workspace.commit(`Build ${i}`);
    }
    expect(git('rev-list', '--count', 'HEAD')).toBe('45');
    const tree = git('rev-parse', 'HEAD^{tree}');
    const before =
      Number(git('count-objects', '-v').match(/size-pack: (\d+)/)?.[1] ?? 0) +
      Number(git('count-objects', '-v').match(/^size: (\d+)/m)?.[1] ?? 0);
    expect(await workspace.pruneHistory()).toBe(25);
    expect(git('rev-list', '--count', 'HEAD')).toBe('20');
    expect(git('rev-parse', 'HEAD^{tree}')).toBe(tree);
    expect(git('log', '-1', '--format=%s')).toBe('Build 44');
    expect(git('log', '--format=%s').split('\n').at(-1)).toMatch(/^Earlier history \(26 commits\) folded/);
    const after =
      Number(git('count-objects', '-v').match(/size-pack: (\d+)/)?.[1] ?? 0) +
      Number(git('count-objects', '-v').match(/^size: (\d+)/m)?.[1] ?? 0);
    expect(after).toBeLessThan(before / 1.5);
    // Short histories are left alone.
    expect(await workspace.pruneHistory()).toBe(0);
  });

  it("a build's commit is staged beside its export and made HEAD only by advance, as git commit would have made it", async () => {
    const dataDir = tempDir('mbm-sbx-stage-');
    const workspace = new ExpoWorkspace(
      join(dataDir, 'workspaces', 'p1'),
      new ExpoToolchain(join(dataDir, 'toolchains'), 58),
    );
    await workspace.ensure({ name: 'Staged' });
    const git = (...args: string[]) => spawnSync('git', args, { cwd: workspace.dir, encoding: 'utf8' }).stdout.trim();
    const app = join(workspace.dir, 'App.tsx');
    const first = git('rev-parse', 'HEAD');
    // Shell syntax and whitespace that `git commit -m` cleans up: the message is data, never script.
    const message = `Make it "green" $(touch pwned) \`id\`  \n\n\n accent colour #30a46c; exit 1\nWorkflow w1\n\n`;

    const idle = await workspace.stage(message);
    expect(idle).toMatchObject({ head: first, commit: null, count: 1 });
    expect(idle.files).toEqual(git('ls-files').split('\n'));
    expect(await workspace.advance(idle)).toBe(true);
    expect(git('rev-parse', 'HEAD')).toBe(first);

    // Staged but not advanced (the export failed): a reset goes back to the last good commit.
    writeFileSync(app, '// broken\n');
    const failed = await workspace.stage(message);
    expect(failed.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git('rev-parse', 'HEAD')).toBe(first);
    await workspace.reset();
    expect(readFileSync(app, 'utf8')).not.toContain('broken');

    writeFileSync(app, '// good\n');
    writeFileSync(join(workspace.dir, 'New.tsx'), 'export const n = 1;\n');
    const staged = await workspace.stage(message);
    expect(staged).toMatchObject({ head: first, count: 2 });
    expect(staged.files).toContain('New.tsx');
    expect(await workspace.advance(staged)).toBe(true);
    expect(git('rev-parse', 'HEAD')).toBe(staged.commit);
    expect(git('rev-list', '--count', 'HEAD')).toBe('2');
    expect(git('status', '--porcelain')).toBe('');
    expect(existsSync(join(workspace.dir, 'pwned'))).toBe(false);
    // The same message and tree `commit` (git commit -m) makes.
    writeFileSync(app, '// committed\n');
    expect(await workspace.commit(message)).toBe(true);
    expect(git('log', '-1', '--format=%B', staged.commit!)).toBe(git('log', '-1', '--format=%B', 'HEAD'));
    expect(git('log', '-1', '--format=%an <%ae>', staged.commit!)).toBe(git('log', '-1', '--format=%an <%ae>', 'HEAD'));

    // A file changed since staging (written by the export): nothing moves, the caller commits.
    writeFileSync(app, '// staged\n');
    const changed = await workspace.stage(message);
    writeFileSync(join(workspace.dir, 'written-by-the-export.txt'), 'x\n');
    const head = git('rev-parse', 'HEAD');
    expect(await workspace.advance(changed)).toBe(false);
    expect(git('rev-parse', 'HEAD')).toBe(head);
  });

  it("a user's workspaces count against the plan's storage quota together with the artifacts", async () => {
    const dir = tempDir('mbm-sbx-quota-');
    writeFileSync(
      join(dir, 'builder.json'),
      JSON.stringify({
        build: { command: 'mkdir -p out && head -c 1000000 /dev/zero > out/page.bin && echo "::preview web out"' },
      }),
    );
    server = await startTestServer({
      builder: 'command',
      builderConfigFile: join(dir, 'builder.json'),
      plans: {
        free: { requestsPerMinute: 1_000_000, projectCreationsPerHour: 1000, maxProjects: 1000, artifactStorageMb: 3 },
      },
    });
    const token = server.token('carol');
    const first = await createProject(server.mcpUrl, token, { name: 'Heavy history' });
    // Another project of hers holds 1.5 MB of workspace (history, caches): 1 MB in it + 1 MB
    // preview copy + 1.5 MB no longer fit in 3 MiB.
    mkdirSync(join(server.dataDir, 'workspaces', first.id), { recursive: true });
    writeFileSync(join(server.dataDir, 'workspaces', first.id, 'history.bin'), Buffer.alloc(1_500_000));
    const second = await createProject(server.mcpUrl, token, { name: 'Next' });
    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: second.id, message: 'build' });
    const failed = await waitIdle(server.mcpUrl, token, second.id);
    const dbg = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: second.id, limit: 50 });
    expect(failed.lastWorkflow.error?.code, JSON.stringify(dbg.messages.map((m: any) => m.content))).toBe(
      'artifact_quota_exceeded',
    );
    expect(failed.lastWorkflow.error.message).toMatch(/used by artifacts and workspaces/);
    // Another user's workspaces do not count against hers, nor hers against his.
    const dave = server.token('dave');
    const his = await createProject(server.mcpUrl, dave, { name: 'His' });
    await toolResult(server.mcpUrl, dave, 'svc_send_message', { projectId: his.id, message: 'build' });
    expect((await waitIdle(server.mcpUrl, dave, his.id)).lastWorkflow.status).toBe('completed');
  });

  it('the Metro cache is pruned to three quarters of its bound, oldest written entries first', async () => {
    const dir = tempDir('mbm-sbx-metro-');
    for (let i = 0; i < 10; i++) {
      mkdirSync(join(dir, `0${i}`), { recursive: true });
      const file = join(dir, `0${i}`, 'entry');
      writeFileSync(file, Buffer.alloc(1000));
      utimesSync(file, new Date(1_000_000 + i * 1000), new Date(1_000_000 + i * 1000));
    }
    expect(await pruneMetroCache(dir, 20_000)).toEqual({ before: 10_000, after: 10_000 });
    expect(await pruneMetroCache(dir, 8000)).toEqual({ before: 10_000, after: 6000 });
    const left = readdirSync(dir).filter((d) => existsSync(join(dir, d, 'entry')));
    expect(left).toEqual(['04', '05', '06', '07', '08', '09']);
  });

  it('serve --http refuses to start without a sandbox unless --no-build-sandbox, and the start-up line says which', async () => {
    const dataDir = tempDir('mbm-sbx-bin-');
    const config = join(dataDir, 'builder.json');
    writeFileSync(config, JSON.stringify({ build: { command: 'true' } }));
    // A PATH with node but no bwrap: what a machine without bubblewrap looks like.
    const bin = tempDir('mbm-sbx-path-');
    symlinkSync(process.execPath, join(bin, 'node'));
    const run = (extra: string[], env: Record<string, string>) =>
      spawnSync(
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
          'command',
          '--builder-config',
          config,
          ...extra,
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, ...env },
          timeout: 120_000,
          killSignal: 'SIGKILL',
        },
      );
    const refused = run([], { PATH: bin });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('no build sandbox can be made here: bwrap (bubblewrap) is not installed');
    expect(refused.stderr).toContain('--no-build-sandbox');
    expect(refused.stderr).not.toContain('listening on');

    const unconfined = await spawnHttpServer(dataDir, ['--builder', 'command', '--builder-config', config], {
      PATH: bin,
      SVC_NO_BUILD_SANDBOX: '1',
    });
    try {
      expect(unconfined.stderr()).toMatch(
        /listening on .*; builds NOT sandboxed \(turned off with --no-build-sandbox\)/,
      );
    } finally {
      await unconfined.stop();
    }
    const sandboxed = await spawnHttpServer(dataDir, ['--builder', 'command', '--builder-config', config]);
    try {
      expect(sandboxed.stderr()).toMatch(/listening on .*; builds sandboxed \(bubblewrap\)/);
    } finally {
      await sandboxed.stop();
    }
  });
});

/** Processes whose working directory is inside `dir` (npm runs in the install folder). */
function processesInside(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`).startsWith(dir)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
