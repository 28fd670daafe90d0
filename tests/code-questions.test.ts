/**
 * Code questions on the real service and engine (docs/builders.md "Code questions"), with the manual
 * builder asking them: `pendingQuestion` shows kind, format and maxLength; the 20,000-character
 * limit holds for instructions and text answers while a code answer may be longer; every bad
 * answer is -32602 with its reasons in `data.issues`, leaves the question pending and writes
 * nothing; a good answer reaches the builder and the conversation shows its summary and file
 * list, not the files.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkCodeAnswer,
  codeAnswerFormat,
  pathProblem,
  type CodeAnswerRules,
} from '../src/builders/expo/code-answer.js';
import { ServiceError } from '../src/errors.js';
import { startEngine, type EngineUnderTest } from './engine-harness.js';
import { httpClient, ROOT, startTestServer, tempDir, waitFor } from './helpers.js';
import { sqliteOf } from './store-access.js';

let engine: EngineUnderTest;
const root = tempDir('mbm-code-');
const rules: CodeAnswerRules = {
  root,
  packages: ['expo', 'expo-status-bar', 'react', 'react-native'],
  typescriptFrom: join(ROOT, 'node_modules'),
  maxFiles: 5,
  maxFileBytes: 100_000,
  maxTotalBytes: 150_000,
};

beforeAll(async () => {
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'App.tsx'), 'export default function App() { return null; }\n');
  writeFileSync(join(root, 'src', 'old.ts'), 'export const old = 1;\n');
  symlinkSync('/tmp', join(root, 'src', 'planted'));
  engine = await startEngine();
});
afterAll(async () => {
  await engine.stop();
});

const SETTINGS = `import { Text, View } from 'react-native';
import { helper } from './util/helper';
export function Settings() {
  return <View><Text>Settings {helper()}</Text></View>;
}
`;
const good = {
  summary: 'Adds a Settings screen',
  files: [
    { path: 'src/Settings.tsx', content: SETTINGS },
    { path: 'src/util/helper.ts', content: 'export const helper = () => "!";\n' },
  ],
  delete: ['src/old.ts'],
};

/** The -32602 a call throws. */
async function refusal(call: () => Promise<unknown>): Promise<ServiceError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).kind).toBe('invalid_params');
    return error as ServiceError;
  }
  throw new Error('expected a refusal');
}

async function codeQuestion(): Promise<{ projectId: string; workflowId: string; questionId: string }> {
  const projectId = await engine.createProject();
  const { workflowId } = await engine.send(projectId, 'add a settings screen');
  const run = await engine.running(workflowId);
  run.ask('code_1', 'Write the code', { kind: 'code', format: codeAnswerFormat(rules), maxLength: 240_000, rules });
  await engine.reach(workflowId, 'waiting_for_input');
  const questionId = (await engine.app.workflows.session(engine.caller, projectId)).pendingQuestion!.questionId;
  return { projectId, workflowId, questionId };
}

describe('code questions', () => {
  it("stores the rules' paths relative to the project's workspace (a question asked on one host can be checked on another), and old absolute ones still check", async () => {
    const { projectId, questionId } = await codeQuestion();
    const db = sqliteOf(engine.app.store);
    const stored = JSON.parse(
      (db.prepare('select rules from questions where id = ?').get(questionId) as { rules: string }).rules,
    ) as CodeAnswerRules;
    const workspace = join(engine.dataDir, 'workspaces', projectId);
    expect(isAbsolute(stored.root)).toBe(false);
    expect(isAbsolute(stored.typescriptFrom)).toBe(false);
    expect(resolve(workspace, stored.root)).toBe(root);
    expect(resolve(workspace, stored.typescriptFrom)).toBe(rules.typescriptFrom);
    // A question stored before paths were relative keeps its absolute paths, and they still work.
    db.prepare('update questions set rules = ? where id = ?').run(JSON.stringify(rules), questionId);
    const error = await refusal(() =>
      engine.app.workflows.send(engine.caller, {
        projectId,
        message: JSON.stringify({ ...good, files: [{ path: 'src/planted/x.ts', content: 'x' }] }),
        questionId,
      }),
    );
    expect(JSON.stringify(error.data)).toContain('src/planted');
    await engine.cancel(projectId);
  });

  it('pendingQuestion shows kind, format and maxLength; text questions are kind "text"', async () => {
    const { projectId, workflowId } = await codeQuestion();
    const pending = (await engine.app.workflows.session(engine.caller, projectId)).pendingQuestion!;
    expect(pending).toMatchObject({
      kind: 'code',
      prompt: 'Write the code',
      maxLength: 240_000,
      format: { type: 'object', required: ['summary', 'files'] },
    });
    expect(JSON.stringify(pending)).not.toContain(root); // the rules stay on the server
    await engine.cancel(projectId, workflowId);

    const other = await engine.createProject();
    const sent = await engine.send(other);
    (await engine.running(sent.workflowId)).ask('colour', 'Which colour?');
    await engine.reach(sent.workflowId, 'waiting_for_input');
    const text = (await engine.app.workflows.session(engine.caller, other)).pendingQuestion!;
    expect(text.kind).toBe('text');
    expect(text).not.toHaveProperty('format');
    expect(text).not.toHaveProperty('maxLength');
    // A text answer keeps the instruction limit, with the same error text as instructions.
    const long = await refusal(() => engine.answer(other, 'x'.repeat(20_001)));
    expect(long.message).toBe('Invalid parameter: message must be at most 20000 characters');
    await engine.cancel(other, sent.workflowId);
    const instruction = await refusal(() => engine.send(other, 'y'.repeat(20_001)));
    expect(instruction.message).toBe('Invalid parameter: message must be at most 20000 characters');
    expect((await engine.send(other, 'z'.repeat(20_000))).workflowId).toBeTruthy();
  });

  it('refuses each bad answer with its reason, keeps the question pending and writes nothing', async () => {
    const { projectId, workflowId, questionId } = await codeQuestion();
    const messagesBefore = (await engine.app.workflows.messages(engine.caller, { projectId })).messages.length;
    const file = (path: string, content = 'export const x = 1;\n') =>
      JSON.stringify({ summary: 's', files: [{ path, content }] });
    const cases: Array<[string, string]> = [
      [file('package.json', '{}'), 'configuration file'],
      [file('README.md'), 'outside the editable files'],
      [file('src/../../etc/passwd.ts'), '".."'],
      [file('/etc/x.ts'), 'absolute'],
      [file('src\\x.ts'), 'backslash'],
      [file('src/a\u0001.ts'), 'control characters'],
      [file('src/types.d.ts'), 'declaration file'],
      [file('src/tsconfig.json', '{}'), 'configuration file'],
      [file('src/.env.ts'), 'configuration file'],
      [file('src/.hidden/x.ts'), 'may contain only'],
      [file('src/planted/evil.ts'), 'symbolic link'],
      [file('src/big.ts', `export const s = "${'a'.repeat(120_000)}";\n`), 'at most 100000'],
      [file('src/data.json', '{nope'), 'not valid JSON'],
      [
        file('src/net.ts', "import axios from 'axios';\nexport default axios;\n"),
        '"axios", which is not one of the app\'s packages',
      ],
      [file('src/fs.ts', "const fs = require('node:fs');\nexport default fs;\n"), '"node:fs"'],
      [file('src/dyn.ts', 'export const m = import(name);\nconst name = "x";\n'), 'computed'],
      [file('src/up.ts', "import x from '../../outside';\nexport default x;\n"), 'outside the app'],
      [
        JSON.stringify({
          summary: 's',
          files: [
            { path: 'src/A.ts', content: '' },
            { path: 'src/a.ts', content: '' },
          ],
        }),
        'only in case',
      ],
      [JSON.stringify({ summary: 's', files: [], delete: ['src/missing.ts'] }), 'does not exist'],
      [JSON.stringify({ summary: 's', files: [{ path: 'src/x.ts' }] }), 'message.files[0].content'],
      [JSON.stringify({ files: [] }), 'message.summary'],
      [JSON.stringify({ summary: 's', files: [], extra: 1 }), 'unknown keys'],
      ['please add a settings screen', 'is not JSON'],
    ];
    for (const [answer, reason] of cases) {
      const error = await refusal(() =>
        engine.app.workflows.send(engine.caller, { projectId, message: answer, questionId }),
      );
      const issues = (error.data as { issues: Array<{ parameter: string; problem: string }> }).issues;
      expect(issues.length, answer.slice(0, 80)).toBeGreaterThan(0);
      expect(`${error.message} ${JSON.stringify(issues)}`, answer.slice(0, 80)).toContain(reason);
    }
    // Longer than the question's maxLength: a 5 MB file (the transports' 1 MiB body and line
    // limits refuse such a message before it gets here).
    const fiveMegabytes = JSON.stringify({
      summary: 's',
      files: [{ path: 'src/huge.ts', content: `export const s = "${'a'.repeat(5 * 1024 * 1024)}";\n` }],
    });
    const huge = await refusal(() =>
      engine.app.workflows.send(engine.caller, { projectId, message: fiveMegabytes, questionId }),
    );
    expect(huge.message).toBe('Invalid parameter: message must be at most 240000 characters');
    expect(huge.data).toMatchObject({
      issues: [{ parameter: 'message', problem: 'must be at most 240000 characters' }],
      kind: 'code',
    });
    // Nothing written: still pending, no message, the builder got nothing.
    expect(engine.row(workflowId).status).toBe('waiting_for_input');
    expect((await engine.app.workflows.session(engine.caller, projectId)).pendingQuestion?.questionId).toBe(questionId);
    expect((await engine.app.workflows.messages(engine.caller, { projectId })).messages.length).toBe(messagesBefore);
    expect(engine.builder.runOf(workflowId)!.answers).toEqual([]);

    // A good answer longer than 20,000 characters is taken; the conversation lists the files only.
    const padded = {
      ...good,
      files: [...good.files, { path: 'src/padding.ts', content: `// ${'p'.repeat(30_000)}\nexport {};\n` }],
    };
    const sent = await engine.app.workflows.send(engine.caller, {
      projectId,
      message: JSON.stringify(padded),
      questionId,
    });
    expect(sent.workflowId).toBe(workflowId);
    const run = engine.builder.runOf(workflowId)!;
    await waitFor(() => run.answers.length === 1, 10_000, 'the answer to reach the builder');
    expect(JSON.parse(run.answers[0]!)).toEqual(padded);
    const answer = (await engine.app.workflows.messages(engine.caller, { projectId })).messages.find(
      (m) => m.type === 'answer',
    )!;
    expect(answer.content).toContain('Code answer: Adds a Settings screen');
    expect(answer.content).toContain('src/Settings.tsx');
    expect(answer.content).toContain('Files deleted: src/old.ts');
    expect(answer.content).not.toContain('ppppp');
    run.finish();
    await engine.reach(workflowId, 'completed');
  });

  it('refuses every way an answer could read outside the app: require.context and other uses of require, "." and ".." in package paths, absolute paths through a package, and a too-deep file (-32602 naming it)', async () => {
    const { projectId, workflowId, questionId } = await codeQuestion();
    const file = (content: string) => JSON.stringify({ summary: 's', files: [{ path: 'App.tsx', content }] });
    const cases: Array<[string, string]> = [
      [file("const ctx = require.context('../', true, /.*/);\nexport default ctx;\n"), 'require.context'],
      [file("const ctx = (require as any).context('../', true, /\\.db$/);\nexport default ctx;\n"), 'require.context'],
      [
        file("const where = (require as any).resolve('react-native');\nexport default where;\n"),
        'uses require other than',
      ],
      [file("const r = require;\nexport default r('react');\n"), 'uses require other than'],
      [
        file("// @ts-ignore\nimport db from 'react-native/../../../../mobile-builder.db';\nexport default db;\n"),
        'a package path may not hold',
      ],
      [
        file("import x from 'react-native/./Libraries/../../../../etc/passwd';\nexport default x;\n"),
        'a package path may not hold',
      ],
      [file("import x from 'react-native//etc/passwd';\nexport default x;\n"), 'an empty one'],
      [file("import x from '/etc/passwd';\nexport default x;\n"), 'an absolute path'],
    ];
    for (const [answer, reason] of cases) {
      const error = await refusal(() =>
        engine.app.workflows.send(engine.caller, { projectId, message: answer, questionId }),
      );
      const issues = (error.data as { issues: Array<{ problem: string }> }).issues;
      expect(issues.map((i) => i.problem).join(' | '), answer.slice(0, 80)).toContain(reason);
    }
    // Harmless uses of the name stay allowed.
    const fine = file(
      "import { Text } from 'react-native';\nconst o = { require: 1 };\nexport default function App() { return <Text>{o.require}</Text>; }\n",
    );
    expect(checkCodeAnswer(rules, fine)).toMatchObject({ ok: true });

    // 3000 nested parentheses: refused as too deep (not "the toolchain is not installed").
    const deep = file(`export const x = ${'('.repeat(3000)}1${')'.repeat(3000)};\n`);
    const error = await refusal(() =>
      engine.app.workflows.send(engine.caller, { projectId, message: deep, questionId }),
    );
    expect(JSON.stringify(error.data)).toContain('nested too deeply to check');
    expect(JSON.stringify(error.data)).not.toContain('toolchain');
    expect(engine.row(workflowId).status).toBe('waiting_for_input');
    expect(engine.builder.runOf(workflowId)!.answers).toEqual([]);
  });

  it('"skip" is an answer', async () => {
    const { projectId, workflowId, questionId } = await codeQuestion();
    const sent = await engine.app.workflows.send(engine.caller, { projectId, message: 'skip', questionId });
    expect(sent.workflowId).toBe(workflowId);
    const run = engine.builder.runOf(workflowId)!;
    await waitFor(() => run.answers.length === 1, 10_000, 'the skip to reach the builder');
    // Taken as the answer itself (not refused as a bad code answer), and the question is gone.
    expect(run.answers).toEqual(['skip']);
    expect((await engine.app.workflows.session(engine.caller, projectId)).pendingQuestion).toBeNull();
    run.finish();
    await engine.reach(workflowId, 'completed');
  });

  it('what the model reads: the server instructions and tool descriptions explain code questions', async () => {
    const server = await startTestServer();
    const client = await httpClient(server.mcpUrl, server.token('alice'));
    try {
      expect(client.getInstructions()).toContain('kind "code"');
      const { tools } = await client.listTools();
      const description = (name: string) => tools.find((t) => t.name === name)!.description!;
      expect(description('svc_send_message')).toMatch(/kind "code".*"summary".*"files".*maxLength/s);
      expect(description('svc_get_session')).toContain('kind "code"');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('the path rule', () => {
    for (const ok of ['App.tsx', 'src/a.ts', 'src/screens/Settings.tsx', 'src/data/items.json', 'src/@x/y-z_1.ts'])
      expect(pathProblem(ok), ok).toBeNull();
    for (const bad of [
      'app.json',
      'index.ts',
      'App.js',
      'src/x.js',
      'src/x.d.ts',
      'src/babel.config.js',
      'src/metro.config.js',
      'tsconfig.json',
      '.env',
      'src/.env',
      'src//a.ts',
      './App.tsx',
      'assets/a.ts',
      'src',
    ]) {
      expect(pathProblem(bad), bad).not.toBeNull();
    }
  });
});
