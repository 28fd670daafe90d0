/**
 * The `expo` builder skips `tsc --noEmit` when nothing it reads changed in type since the last
 * passing check (docs/builders.md "Skipping the type check"), on the real toolchain with a
 * scripted `command` agent: a rebuild after a value-only JSON edit skips it; a JSON edit that
 * adds a key or changes a value's type, and any code edit, runs it; a type error written after a
 * skipped check is still caught.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, tempDir, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { ensureToolchain, startExpoServer } from './expo-helpers.js';

/**
 * A scripted "code agent" editing the template's `src/app-settings.json` and code:
 * - "value <text>": the subtitle becomes <text> (a string stays a string);
 * - "add a key": a key `tagline` (the app's interface allows extra keys of a JSON module);
 * - "retype": `darkMode` becomes a string (App.tsx wants a boolean: a type error);
 * - "code edit": a comment line appended to App.tsx;
 * - "break the types": a new file assigning a string to a number.
 */
const AGENT = `#!/bin/sh
set -e
case "$SVC_INSTRUCTION" in
  "value "*)
    sed -i "s/\\"subtitle\\": \\"[^\\"]*\\"/\\"subtitle\\": \\"$SVC_INSTRUCTION\\"/" src/app-settings.json
    ;;
  "add a key")
    sed -i 's/"darkMode":/"tagline": "new", "darkMode":/' src/app-settings.json
    ;;
  "retype")
    sed -i 's/"darkMode": [a-z]*/"darkMode": "no"/' src/app-settings.json
    ;;
  "code edit")
    printf '// %s\\n' "$SVC_WORKFLOW_ID" >> App.tsx
    ;;
  "break the types")
    printf 'const count: number = "not a number";\\nexport default count;\\n' > src/broken.ts
    ;;
esac
`;

const SKIPPED_VALUES =
  'Type check skipped: only JSON values changed since the last passing check, not the types TypeScript infers for them, so tsc --noEmit would pass again.';

let server: TestServer;
let token: string;

beforeAll(async () => {
  await ensureToolchain();
  const agentFile = join(tempDir(), 'agent.sh');
  writeFileSync(agentFile, AGENT, { mode: 0o755 });
  server = await startExpoServer({ agentCommand: agentFile, agentTimeoutSeconds: 120 });
  token = server.token('alice');
});

afterAll(async () => {
  await server?.close();
});

describe('expo builder: skipping the type check', () => {
  it('skips it after value-only JSON edits and runs it after any other edit', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Skip App' });
    let cursor = 0;
    /** Builds, and returns the workflow and the contents of the messages it posted. */
    const build = async (message: string): Promise<{ workflow: any; said: string[] }> => {
      await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: project.id, message, kind: 'build' });
      const session = await waitIdle(server.mcpUrl, token, project.id, 540_000);
      const said: string[] = [];
      for (let more = true; more;) {
        const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
          projectId: project.id,
          after: cursor,
          limit: 500,
        });
        said.push(...page.messages.map((m: { content: string }) => m.content));
        cursor = page.nextAfter;
        more = page.hasMore;
      }
      return { workflow: session.lastWorkflow, said };
    };
    const completed = (run: { workflow: any }) => {
      expect(run.workflow.status, JSON.stringify(run.workflow.error)).toBe('completed');
      expect(run.workflow.step).toMatchObject({ index: 5, total: 5, name: 'Publishing the web preview' });
    };
    const skippedIn = (run: { said: string[] }) => run.said.filter((m) => m.startsWith('Type check skipped')).length;

    // The first check has nothing to compare with: it runs, and passing records the workspace.
    const first = await build('value one');
    completed(first);
    expect(skippedIn(first)).toBe(0);

    // A string value changed: the same types, the check is skipped and the steps stay the same.
    const valueOnly = await build('value two');
    completed(valueOnly);
    expect(valueOnly.said, valueOnly.said.join('\n')).toContain(SKIPPED_VALUES);
    expect(valueOnly.said).toContain('Step 3/5: Type checking (tsc --noEmit)');
    expect(valueOnly.said).toContain('Step 4/5: Exporting the web app (expo export --platform web)');

    // A key added: the JSON module's type changed, the check runs (and passes).
    const keyAdded = await build('add a key');
    completed(keyAdded);
    expect(skippedIn(keyAdded)).toBe(0);

    // A value's type changed: the check runs and fails on App.tsx.
    const retyped = await build('retype');
    expect(skippedIn(retyped)).toBe(0);
    expect(retyped.workflow.status).toBe('failed');
    expect(retyped.workflow.error.code).toBe('type_check_failed');
    expect(retyped.workflow.error.message).toMatch(/App\.tsx.*TS2322/);

    // Back at the last good version, a value edit is skipped again (the failure recorded nothing).
    const afterFailure = await build('value three');
    completed(afterFailure);
    expect(afterFailure.said).toContain(SKIPPED_VALUES);

    // A type error written after a skipped check: a code file changed, so the check runs and catches it.
    const broken = await build('break the types');
    expect(skippedIn(broken)).toBe(0);
    expect(broken.workflow.error?.code).toBe('type_check_failed');
    expect(broken.workflow.error.message).toMatch(/src\/broken\.ts.*TS2322/);

    // A code edit that type-checks: the check runs, and its pass is the new record.
    const codeEdit = await build('code edit');
    completed(codeEdit);
    expect(skippedIn(codeEdit)).toBe(0);
    const afterCode = await build('value four');
    completed(afterCode);
    expect(afterCode.said).toContain(SKIPPED_VALUES);
  });
});
