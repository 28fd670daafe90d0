/**
 * The `expo` builder's `command` agent on the real toolchain: an agent that adds a screen (it
 * renders), one that breaks the types (the build fails with the compiler's output, the workspace
 * is reset and the next build works), a question relayed with `::ask`, and a cancel during the
 * export that leaves no process behind.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  processesWith,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  waitQuestion,
  type TestServer,
} from '../helpers.js';
import { ensureToolchain, launchChromium, pageText, startExpoServer } from './expo-helpers.js';

/**
 * A scripted "code agent": reads SVC_INSTRUCTION and edits the app.
 * - "add a settings screen": writes src/SettingsScreen.tsx and renders it from App.tsx;
 * - "break the types": assigns a string to a number;
 * - "ask first": asks a question with ::ask and writes the answer into the app;
 * - "slow": sleeps in a child process (so a cancel has a group to kill).
 */
const AGENT = `#!/bin/sh
set -e
case "$SVC_INSTRUCTION" in
  *"add a settings screen"*)
    mkdir -p src
    cat > src/SettingsScreen.tsx <<'EOF'
import { Text, View } from 'react-native';

export function SettingsScreen({ title }: { title: string }) {
  return (
    <View>
      <Text>{title}: Notifications, Theme, About</Text>
    </View>
  );
}
EOF
    sed -i "s#^import settings from './src/app-settings.json';#import settings from './src/app-settings.json';\\nimport { SettingsScreen } from './src/SettingsScreen';#" App.tsx
    sed -i "s#<ScrollView contentContainerStyle={styles.body}>#<ScrollView contentContainerStyle={styles.body}><SettingsScreen title=\\"Settings screen\\" />#" App.tsx
    printf '%s\\n' '::result Added a Settings screen'
    ;;
  *"break the types"*)
    printf 'const count: number = "not a number";\\nexport default count;\\n' > src/broken.ts
    echo "wrote a broken file"
    ;;
  *"ask first"*)
    printf '%s\\n' '::ask favourite_colour {"prompt":"Which colour do you like?","options":["teal","orange"]}'
    read answer
    printf '{"name":"%s","subtitle":"Likes %s","accentColor":"#12a594","darkMode":false,"instructions":[]}\\n' "$SVC_PROJECT_NAME" "$answer" > src/app-settings.json
    ;;
  *"link out"*)
    ln -s /etc src/outside
    ;;
  *"flood"*)
    seq 1 200000
    ;;
  *"slow"*)
    echo "thinking"
    sh -c "sleep 300; : mbm-slow-$SVC_PROJECT_ID" &
    echo "sleeper started" >&2
    wait
    ;;
esac
`;

let server: TestServer;
let token: string;
let browser: Browser | null;

beforeAll(async () => {
  await ensureToolchain();
  const agentFile = join(tempDir(), 'agent.sh');
  writeFileSync(agentFile, AGENT, { mode: 0o755 });
  server = await startExpoServer({ agentCommand: agentFile, agentTimeoutSeconds: 120 }, { cancelTimeoutMs: 20_000 });
  token = server.token('alice');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function build(projectId: string, message: string): Promise<any> {
  await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message, kind: 'build' });
  return waitIdle(server.mcpUrl, token, projectId, 540_000);
}

function processesUnder(dir: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(dir) && !line.includes('ps -eo'));
}

describe('expo builder: command agent', () => {
  it('an agent that adds a screen: the screen renders', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Agent App' });
    const session = await build(project.id, 'add a settings screen');
    expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
    const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 200 });
    const said = page.messages.map((m: { content: string }) => m.content);
    expect(said).toContain('Added a Settings screen');
    expect(said).toContain('Step 2/5: Running the code agent');
    if (browser) {
      const url = session.previewUrls.find((p: { platform: string }) => p.platform === 'web').url;
      expect(await pageText(browser, url, 'Settings screen: Notifications, Theme, About')).toContain('Agent App');
    }
  });

  it('an agent that breaks the types: type_check_failed with the compiler output, reset, next build works', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Broken App' });
    const failed = await build(project.id, 'break the types');
    expect(failed.lastWorkflow.status).toBe('failed');
    expect(failed.lastWorkflow.error.code).toBe('type_check_failed');
    expect(failed.lastWorkflow.error.message).toMatch(/src\/broken\.ts.*TS2322/);
    const workspace = join(server.dataDir, 'workspaces', project.id);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');

    const next = await build(project.id, 'a plain build after the failure');
    expect(next.lastWorkflow.status, JSON.stringify(next.lastWorkflow.error)).toBe('completed');
  });

  it('an agent that links out of the workspace fails with agent_failed; one that floods output is bounded', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Hostile App' });
    const linked = await build(project.id, 'link out');
    expect(linked.lastWorkflow.error?.code).toBe('agent_failed');
    expect(linked.lastWorkflow.error.message).toContain('src/outside');
    const workspace = join(server.dataDir, 'workspaces', project.id);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');

    const flooded = await build(project.id, 'flood');
    expect(flooded.lastWorkflow.status, JSON.stringify(flooded.lastWorkflow.error)).toBe('completed');
    const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 200 });
    expect(page.messages.some((m: { content: string }) => m.content.startsWith('[output truncated'))).toBe(true);
  });

  it("relays the agent's ::ask question and hands it the answer", async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Asking App' });
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'ask first',
      kind: 'build',
    });
    const asking = await waitQuestion(server.mcpUrl, token, project.id, 120_000);
    expect(asking.pendingQuestion).toMatchObject({ prompt: 'Which colour do you like?', options: ['teal', 'orange'] });
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'orange',
      questionId: asking.pendingQuestion.questionId,
    });
    const done = await waitIdle(server.mcpUrl, token, project.id, 540_000);
    expect(done.lastWorkflow.status, JSON.stringify(done.lastWorkflow.error)).toBe('completed');
    if (browser) {
      const url = done.previewUrls.find((p: { platform: string }) => p.platform === 'web').url;
      expect(await pageText(browser, url, 'Likes orange')).toContain('Asking App');
    }
  });

  it('cancel while the agent runs and during an export leaves no process behind and resets the workspace', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Cancel App' });
    const workspace = join(server.dataDir, 'workspaces', project.id);

    // During the agent: its process group (a shell and its sleeping child) is killed.
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'slow',
      kind: 'build',
    });
    // The agent's child names the project in its command line (its pid is the sandbox's own), so
    // the check never counts another run's processes.
    const marker = `mbm-slow-${project.id}`;
    await waitFor(() => processesWith(marker).length > 0 || null, 120_000, 'the agent to start its child');
    const cancelled = await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    expect(cancelled.status).toBe('cancelled');
    await waitFor(() => processesWith(marker).length === 0 || null, 15_000, 'the sleeper to be gone');

    // During the web export: the export's process group is killed.
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'export please',
      kind: 'build',
    });
    await waitFor(
      async () => {
        const s = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
        return s.activeWorkflow?.step?.name?.startsWith('Exporting the web app') ? s : null;
      },
      300_000,
      'the export step',
    );
    await waitFor(
      () => processesUnder(workspace).some((line) => line.includes('expo/bin/cli')) || null,
      60_000,
      'the export process',
    );
    const stopped = await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    expect(stopped.status).toBe('cancelled');
    await waitFor(() => processesUnder(workspace).length === 0 || null, 15_000, 'no process in the workspace');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');
  });
});
