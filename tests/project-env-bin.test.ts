/**
 * A project's environment (docs/security.md "Project environment") on the built bin: the operator
 * sets a plain `EXPO_PUBLIC_*` variable and a secret with `env set`, the command builder's build and
 * deploy commands get both, and the secret's value appears in no output: not in a message, a tool
 * result, the session, an artifact, `/metrics`, the server's stdout or stderr, the CLI's output, nor
 * in plaintext in the SQLite file. A deploy that writes the secret into its published folder fails
 * with `secret_in_artifact` and publishes nothing. The source a deploy keeps for its diff has the
 * secrets replaced by their names.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { unpackSourceFiles } from '../src/io/source-snapshot.js';
import { BIN, createProject, GENEROUS_PLANS, rawHttp, tempDir, toolResult, waitIdle } from './helpers.js';

const SECRET = 'sk_live_7f3a9c1e5b2d8f40';
const OTHER_SECRET = 'from-stdin-91c2e77d';
let server: SpawnedServer | undefined;

afterAll(async () => {
  await server?.stop();
});

describe('project environment and secrets (command builder, built bin)', () => {
  it('gives builds the variables, lists names only, and never lets a secret out', async () => {
    const dataDir = tempDir('mbm-env-');
    const command = [
      'echo "plain is $EXPO_PUBLIC_GREETING"',
      'echo "secret is $API_SECRET and $STDIN_SECRET"',
      // Exit 3 unless the build really has the values.
      `test "$API_SECRET" = "${SECRET}" && test "$STDIN_SECRET" = "${OTHER_SECRET}" || exit 3`,
      'echo "::message the key $API_SECRET is here"',
      'mkdir -p out && echo "<h1>$EXPO_PUBLIC_GREETING</h1>" > out/index.html',
      'echo "$API_SECRET" > not-published.txt',
      'case "$SVC_INSTRUCTION" in *leak*) echo "key=$API_SECRET" > out/config.txt;; esac',
      'if [ "$SVC_WORKFLOW_KIND" = deploy ]; then echo "::deployment web out"; else echo "::preview web out"; fi',
    ].join('\n');
    writeFileSync(join(dataDir, 'builder.json'), JSON.stringify({ build: { command }, deploy: { command } }));
    // The waits below poll the session: a request limit no busy machine meets.
    writeFileSync(join(dataDir, 'plans.json'), JSON.stringify(GENEROUS_PLANS));
    const token = cliToken(dataDir, 'olga');
    server = await spawnHttpServer(dataDir, [
      '--builder',
      'command',
      '--builder-config',
      join(dataDir, 'builder.json'),
      '--plans',
      join(dataDir, 'plans.json'),
    ]);
    const project = await createProject(server.mcpUrl, token, { name: 'Env app', visibility: 'public' });

    const cli: string[] = [];
    const env = (args: string[], input?: string) => {
      const out =
        input === undefined ? runCli(['env', ...args, '--data-dir', dataDir]) : stdinCli(args, dataDir, input);
      cli.push(out.stdout, out.stderr);
      return out;
    };
    expect(env(['set', '--project', project.id, 'EXPO_PUBLIC_GREETING=Hello from env']).status).toBe(0);
    expect(env(['set', '--project', project.id, '--secret', `API_SECRET=${SECRET}`]).status).toBe(0);
    expect(env(['set', '--project', project.id, '--secret', 'STDIN_SECRET'], `${OTHER_SECRET}\n`).status).toBe(0);
    // Refusals: a secret EXPO_PUBLIC_ variable, a reserved name, an unknown project.
    expect(env(['set', '--project', project.id, '--secret', 'EXPO_PUBLIC_KEY=abcdefghijk']).stderr).toMatch(
      /inlined into the app/,
    );
    expect(env(['set', '--project', project.id, 'PATH=/tmp']).status).toBe(1);
    const listed = env(['list', '--project', project.id, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ name: 'API_SECRET', secret: true, value: null }),
      expect.objectContaining({ name: 'EXPO_PUBLIC_GREETING', secret: false, value: 'Hello from env' }),
      expect.objectContaining({ name: 'STDIN_SECRET', secret: true, value: null }),
    ]);
    env(['list', '--project', project.id]);

    const results: unknown[] = [];
    const run = async (message: string, kind: 'build' | 'deploy') => {
      const sent = await toolResult(server!.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message,
        kind,
      });
      const session = await waitIdle(server!.mcpUrl, token, project.id);
      results.push(sent, session);
      expect(session.lastWorkflow.id).toBe(sent.workflowId);
      return session.lastWorkflow;
    };
    const build = await run('Build it', 'build');
    expect(build.status).toBe('completed');
    const deploy = await run('Deploy it', 'deploy');
    expect(deploy.status).toBe('completed');
    const leak = await run('Deploy it with a leak', 'deploy');
    expect(leak.status).toBe('failed');
    expect(leak.error).toMatchObject({ code: 'secret_in_artifact' });
    expect(leak.error.message).toMatch(/config\.txt .*API_SECRET/);
    expect(leak.previewUrls).toEqual([]);

    const session = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(session.environment).toEqual([
      { name: 'API_SECRET', secret: true },
      { name: 'EXPO_PUBLIC_GREETING', secret: false },
      { name: 'STDIN_SECRET', secret: true },
    ]);
    const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
      projectId: project.id,
      limit: 500,
    });
    const said = messages.map((m: { content: string }) => m.content).join('\n');
    // The build had the values (it checked them), and its reports carry the names instead.
    expect(said).toContain('plain is Hello from env');
    expect(said).toContain('secret is [secret API_SECRET] and [secret STDIN_SECRET]');
    expect(said).toContain('the key [secret API_SECRET] is here');

    const artifacts: string[] = [];
    for (const workflow of [build, deploy]) {
      const url = workflow.previewUrls[0].url as string;
      const page = await rawHttp(url);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Hello from env');
      artifacts.push(page.text);
    }
    const metrics = await rawHttp(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);

    const dbFiles = readdirSync(dataDir)
      .filter((f) => f.startsWith('mobile-builder.db'))
      .map((f) => readFileSync(join(dataDir, f)).toString('latin1'));
    expect(dbFiles.join('')).toContain('API_SECRET');
    // The source each deploy keeps for its page's diff holds the workspace's files (the unpublished
    // one too) with every secret replaced by its name.
    const db = new Database(join(dataDir, 'mobile-builder.db'), { readonly: true });
    const rows = db.prepare('select source from releases where source is not null').all() as { source: Buffer }[];
    db.close();
    const kept = JSON.stringify(rows.map((r) => unpackSourceFiles(r.source)));
    expect(rows.length).toBeGreaterThan(0);
    expect(kept).toContain('not-published.txt');
    expect(kept).toContain('[secret API_SECRET]');
    const outputs = {
      deploySources: kept,
      messages: said,
      toolResults: JSON.stringify([...results, session, messages]),
      artifacts: artifacts.join('\n'),
      metrics: metrics.text,
      serverStderr: server.stderr(),
      cli: cli.join('\n'),
      store: dbFiles.join(''),
    };
    for (const [where, text] of Object.entries(outputs)) {
      expect(text, where).not.toContain(SECRET);
      expect(text, where).not.toContain(OTHER_SECRET);
    }

    expect(env(['unset', '--project', project.id, 'API_SECRET']).status).toBe(0);
    expect(env(['unset', '--project', project.id, 'API_SECRET']).status).toBe(1);
    const after = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(after.environment.map((v: { name: string }) => v.name)).toEqual(['EXPO_PUBLIC_GREETING', 'STDIN_SECRET']);
  });
});

/** `mobile-builder-mcp env <args>` with `input` on stdin. */
function stdinCli(args: string[], dataDir: string, input: string) {
  const result = spawnSync(process.execPath, [BIN, 'env', ...args, '--data-dir', dataDir], {
    encoding: 'utf8',
    input,
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
