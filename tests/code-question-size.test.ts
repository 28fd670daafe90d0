/**
 * Big code questions reach the model whole (docs/builders.md "Code questions"): for an app of 40 files, the
 * `svc_get_session` result that carries the code question stays under 50,000 characters (hosts cut
 * or divert larger tool results), and every file the prompt does not show inline is readable with
 * `svc_get_session`'s `questionFilesPage`. The question is asked by the real host agent through
 * the real engine; only the workspace is a plain folder (no toolchain needed).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Builder, BuildContext, BuildJob } from '../src/builders/builder.js';
import { HostAgent } from '../src/builders/expo/host-agent.js';
import type { AgentInput } from '../src/builders/expo/agent-step.js';
import {
  createProject,
  httpClient,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  type TestServer,
} from './helpers.js';

const TOOLCHAIN = join(import.meta.dirname, '..', 'toolchains', 'expo-sdk-58');

/** An app of 40 files: App.tsx and 39 screens of about 2,500 characters each (100 KB in all). */
function appOf40Files(dir: string): string[] {
  mkdirSync(join(dir, 'src', 'screens'), { recursive: true });
  const files = ['App.tsx'];
  writeFileSync(
    join(dir, 'App.tsx'),
    `import { Screen01 } from './src/screens/Screen01';\nexport default function App() {\n  return <Screen01 />;\n}\n`,
  );
  for (let i = 1; i <= 39; i++) {
    const name = `Screen${String(i).padStart(2, '0')}`;
    const rows = Array.from(
      { length: 40 },
      (_, r) => `      <Text style={{ color: "#333" }}>Row ${r} of "${name}": a line of text\\n</Text>`,
    ).join('\n');
    writeFileSync(
      join(dir, 'src', 'screens', `${name}.tsx`),
      `import { Text, View } from 'react-native';\n\nexport function ${name}() {\n  return (\n    <View>\n${rows}\n    </View>\n  );\n}\n`,
    );
    files.push(`src/screens/${name}.tsx`);
  }
  return files;
}

/** Runs the host agent on a plain folder (as the expo builder would on its workspace). */
class HostAgentOnFolder implements Builder {
  readonly name = 'host-agent-on-folder';
  readonly dir = tempDir('mbm-40-files-');
  readonly files = appOf40Files(this.dir);
  async run(job: BuildJob, context: BuildContext): Promise<void> {
    const toolchain = {
      sdk: 58,
      reactNativeVersion: '0.88.1',
      packageJsonFile: join(TOOLCHAIN, 'package.json'),
      nodeModules: join(TOOLCHAIN, 'node_modules'),
    };
    const input = {
      job,
      context,
      sdk: 58,
      toolchain,
      toolchains: [toolchain],
      workspace: { dir: this.dir, trackedFiles: async () => [...this.files] },
      typeCheck: async () => ({ ok: true, diagnostics: [] }),
    } as unknown as AgentInput;
    await new HostAgent().run(input);
  }
}

let server: TestServer;
let builder: HostAgentOnFolder;
let token: string;
let client: Client;

beforeAll(async () => {
  builder = new HostAgentOnFolder();
  server = await startTestServer({ builderInstance: builder });
  token = server.token('alice');
  client = await httpClient(server.mcpUrl, token);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

it('the code question of a 40-file app fits in 50,000 characters, and the other files are read by page', async () => {
  const projectId = (await createProject(server.mcpUrl, token)).id;
  await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId,
    message: 'Add a settings screen',
    kind: 'build',
  });
  await waitFor(
    async () => (await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId })).pendingQuestion,
    15_000,
    'the code question',
  );
  const result = await client.callTool({ name: 'svc_get_session', arguments: { projectId } });
  const size = JSON.stringify(result).length;
  const text = (result.content as any[])[0].text.length;
  process.stderr.write(
    `[size] svc_get_session with a 40-file code question: result ${size} characters, text item ${text}\n`,
  );
  expect(size).toBeLessThan(50_000);
  const question = (result.structuredContent as any).pendingQuestion;

  // Every file of the app is in the prompt or on a page the prompt names.
  const seen = new Map<string, string>();
  for (const m of question.prompt.matchAll(/----- BEGIN (\S+) -----\n([\s\S]*?)----- END \1 -----/g))
    seen.set(m[1], m[2]);
  const pages = Number(/Read pages 2 to (\d+) with svc_get_session/.exec(question.prompt)?.[1]);
  expect(pages).toBeGreaterThan(1);
  expect(question.prompt).toContain('"questionFilesPage": N');
  for (let page = 2; page <= pages; page++) {
    const read = await client.callTool({ name: 'svc_get_session', arguments: { projectId, questionFilesPage: page } });
    process.stderr.write(
      `[size] questionFilesPage ${page} of ${pages}: result ${JSON.stringify(read).length} characters\n`,
    );
    expect(JSON.stringify(read).length).toBeLessThan(50_000);
    const files = (read.structuredContent as any).questionFiles;
    expect(files).toMatchObject({ questionId: question.questionId, page, pages });
    for (const f of files.files) seen.set(f.path, f.content);
  }
  expect([...seen.keys()].sort()).toEqual([...builder.files].sort());
  expect(seen.get('src/screens/Screen39.tsx')).toContain('export function Screen39()');
  const past = await client
    .callTool({ name: 'svc_get_session', arguments: { projectId, questionFilesPage: pages + 1 } })
    .catch((e: unknown) => e);
  expect((past as { code: number }).code).toBe(-32602);

  await client.callTool({
    name: 'svc_send_message',
    arguments: { projectId, message: 'skip', questionId: question.questionId },
  });
  await waitIdle(server.mcpUrl, token, projectId);
});
