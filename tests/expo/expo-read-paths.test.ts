/**
 * The read paths of a hostile app against the real toolchain, below the import check: a code
 * agent (which the import check never sees) writes App.tsx that imports the store through a
 * package subpath with "..", through an absolute path, and lists another workspace with
 * require.context. The managed Metro config refuses the first two and leaves require.context
 * untransformed (tested without the sandbox, so the Metro config alone is shown), and with the sandbox on the store is not even there; no preview or
 * artifact holds the store's bytes or the other workspace's text.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_TURNED_OFF } from '../../src/builders/process-sandbox.js';
import { createProject, tempDir, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { ensureToolchain, startExpoServer } from './expo-helpers.js';

const SECRET = `victim-secret-${process.pid}`;

/** An agent that writes the App.tsx its instruction names (heredocs: nothing outside the workspace is read). */
function agentFor(dataDir: string): string {
  const store = join(dataDir, 'mobile-builder.db');
  // From the expo package folder up to the root, then down to the store (react-native's own
  // subpaths are refused on web by Expo already). More `..` than any folder is deep: past the root
  // they stay at the root, so the path names the store whether Metro starts from the workspace's
  // node_modules link or the toolchain's real folder, wherever either lies.
  const up = `${'../'.repeat(40)}${store.replace(/^\//, '')}`;
  const apps: Record<string, string> = {
    dotdot: `// @ts-ignore\nimport db from 'expo/${up}';\nimport { Text } from 'react-native';\nexport default function App() { return <Text>{String(db)}</Text>; }\n`,
    absolute: `// @ts-ignore\nimport db from '${store}';\nimport { Text } from 'react-native';\nexport default function App() { return <Text>{String(db)}</Text>; }\n`,
    context: `import { Text } from 'react-native';\nconst ctx = (require as any).context('../', true, /secret\\.ts$/);\nexport default function App() { return <Text>{ctx.keys().map((k: string) => String(ctx(k).default)).join()}</Text>; }\n`,
  };
  return Object.entries(apps)
    .map(
      ([name, content]) =>
        `if [ "$SVC_INSTRUCTION" = "${name}" ]; then cat > App.tsx <<'APP_EOF'\n${content}APP_EOF\nfi`,
    )
    .join('\n');
}

/** Every file under `dir`'s contents, concatenated (artifacts and the export output). */
function allBytes(dir: string): string {
  let text = '';
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size < 50_000_000) text += readFileSync(path, 'latin1');
    }
  };
  try {
    walk(dir);
  } catch {
    // absent: nothing published
  }
  return text;
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
beforeAll(async () => {
  await ensureToolchain();
});

async function attack(
  sandboxOff: boolean,
  instruction: string,
): Promise<{ session: any; said: string; dataDir: string; workspace: string }> {
  const dataDir = tempDir('mbm-read-');
  server = await startExpoServer(
    { agentCommand: agentFor(dataDir), agentTimeoutSeconds: 60 },
    { dataDir, ...(sandboxOff && { buildSandbox: SANDBOX_TURNED_OFF }) },
  );
  const token = server.token('mallory');
  const victim = await createProject(server.mcpUrl, server.token('alice'), { name: 'Victim' });
  const victimDir = join(dataDir, 'workspaces', victim.id, 'src');
  mkdirSync(victimDir, { recursive: true });
  writeFileSync(join(victimDir, 'secret.ts'), `export default '${SECRET}';\n`);
  const project = await createProject(server.mcpUrl, token, { name: 'Reader' });
  await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: instruction,
    kind: 'build',
  });
  const session = await waitIdle(server.mcpUrl, token, project.id, 540_000);
  const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 500 });
  const said = page.messages.map((m: { content: string }) => m.content).join('\n');
  return { session, said, dataDir, workspace: join(dataDir, 'workspaces', project.id) };
}

function expectNothingLeaked(dataDir: string, workspace: string): void {
  const published = allBytes(join(dataDir, 'artifacts')) + allBytes(join(workspace, '.svc'));
  expect(published).not.toContain('SQLite format 3');
  expect(published).not.toContain(SECRET);
}

describe('expo builder: read paths below the import check', () => {
  it('the resolver alone (sandbox off) refuses a package subpath with ".." and an absolute path; require.context lists nothing', async () => {
    for (const instruction of ['dotdot', 'absolute']) {
      const { session, said, dataDir, workspace } = await attack(true, instruction);
      expect(session.lastWorkflow.status, instruction).toBe('failed');
      expect(session.lastWorkflow.error.code, instruction).toBe('export_failed');
      // The export's output (posted to the conversation) names the refusal.
      expect(`${said}\n${session.lastWorkflow.error.message}`, instruction).toMatch(/Refused to bundle/);
      expect(session.previewUrls, instruction).toEqual([]);
      expectNothingLeaked(dataDir, workspace);
      await server!.close();
      server = undefined;
    }
    // require.context is off: the call stays a plain (failing) call at run time, so the export
    // passes, and no file of the other workspace is in it.
    const { dataDir, workspace } = await attack(true, 'context');
    expect(allBytes(join(workspace, '.svc')).length).toBeGreaterThan(0);
    expectNothingLeaked(dataDir, workspace);
  });

  it('with the sandbox on, the store is not there to bundle', async () => {
    const { session, dataDir, workspace } = await attack(false, 'absolute');
    expect(session.lastWorkflow.status).toBe('failed');
    expect(session.lastWorkflow.error.code).toBe('export_failed');
    expect(session.previewUrls).toEqual([]);
    expectNothingLeaked(dataDir, workspace);
  });
});
