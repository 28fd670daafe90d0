/**
 * Questions for the person are asked of the person (docs/contract.md#elicitation), over HTTP with
 * the SDK clients against the real server, engine and store, the manual builder asking: a client
 * of the 2026-07-28 era (SDK v2) that declares form elicitation is answered with `input_required`
 * by a `svc_get_session` wait that finds a text question, fulfils it through its
 * `elicitation/create` handler and retries; accept answers the question and the workflow goes on,
 * decline and cancel leave it pending and the result says so. Code questions are never asked.
 * A client without the capability gets byte for byte what it got before, and so does a 2025-11-25
 * client over HTTP (stateless: the server does not know its capabilities).
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, waitFor, type TestServer } from './helpers.js';
import { ManualBuilder, type ManualRun } from './manual-builder.js';

const MODERN = '2026-07-28';

type Answer = { action: 'accept'; content: Record<string, string> } | { action: 'decline' } | { action: 'cancel' };

/** The person behind a client: answers each form with the next answer set for it, and remembers what was asked. */
class Person {
  readonly asked: Array<{ message: string; requestedSchema: any }> = [];
  readonly answers: Answer[] = [];

  answer(params: unknown): Answer {
    this.asked.push(params as { message: string; requestedSchema: any });
    return this.answers.shift() ?? { action: 'cancel' };
  }
}

let server: TestServer;
let builder: ManualBuilder;
const person = new Person();
const v1Person = new Person();
let asker: ClientV2;
let plain: ClientV2;
let v1Asker: ClientV1;
let plainV1: ClientV1;

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
  const auth = { headers: { authorization: `Bearer ${server.token('alice')}` } };
  const url = new URL(server.mcpUrl);
  asker = new ClientV2(
    { name: 'asker', version: '1' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } },
  );
  asker.setRequestHandler('elicitation/create', (request) => person.answer(request.params));
  await asker.connect(new HttpTransportV2(url, { requestInit: auth }));
  plain = new ClientV2({ name: 'plain', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await plain.connect(new HttpTransportV2(url, { requestInit: auth }));
  v1Asker = new ClientV1({ name: 'v1-asker', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  v1Asker.setRequestHandler(ElicitRequestSchema, (request) => v1Person.answer(request.params));
  await v1Asker.connect(new HttpTransportV1(url, { requestInit: auth }));
  plainV1 = new ClientV1({ name: 'plain-v1', version: '1' });
  await plainV1.connect(new HttpTransportV1(url, { requestInit: auth }));
});

afterAll(async () => {
  for (const client of [asker, plain, v1Asker, plainV1]) await client?.close();
  await server?.close();
});

/** One tool call's structured result and its JSON text item. */
async function call(
  client: ClientV1 | ClientV2,
  name: string,
  args: Record<string, unknown>,
): Promise<{ data: any; text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as {
    structuredContent?: unknown;
    content: Array<{ type: string; text?: string }>;
  };
  return { data: result.structuredContent, text: result.content[0]!.text! };
}

/** A project whose build's run the test drives, with a question asked and seen pending. */
async function asking(
  prompt: string,
  extra: Parameters<ManualRun['ask']>[2] = {},
): Promise<{ projectId: string; run: ManualRun; questionId: string }> {
  const project = await call(plain, 'svc_create_project', { name: `Asks ${prompt}` });
  const sent = await call(plain, 'svc_send_message', {
    projectId: project.data.id,
    message: 'Build it',
    kind: 'build',
  });
  const run = await waitFor(() => builder.runOf(sent.data.workflowId));
  run.ask('q', prompt, extra);
  const pending = await waitFor(
    async () => (await call(plain, 'svc_get_session', { projectId: project.data.id })).data.pendingQuestion,
  );
  return { projectId: project.data.id, run, questionId: pending.questionId };
}

/** `data` without its `elicitation`, as JSON (the key order kept). */
function withoutElicitation(data: Record<string, unknown>): string {
  const { elicitation: _asked, ...rest } = data;
  return JSON.stringify(rest);
}

describe('2026-07-28: a pending text question is asked through input_required', () => {
  it('with options: the person picks one, it answers the question, and the workflow goes on', async () => {
    const { projectId, run, questionId } = await asking('Which color?', { options: ['red', 'blue'] });
    person.answers.push({ action: 'accept', content: { answer: 'blue' } });
    const { data } = await call(asker, 'svc_get_session', { projectId, waitSeconds: 30 });

    expect(person.asked.at(-1)).toMatchObject({
      message: 'Which color?',
      requestedSchema: {
        type: 'object',
        properties: { answer: { type: 'string', enum: ['red', 'blue'] } },
        required: ['answer'],
      },
    });
    expect(data.elicitation).toMatchObject({ questionId, action: 'accept', answered: true });
    expect(data.pendingQuestion).toBeNull();
    await waitFor(() => run.answers[0] === 'blue');
    run.finish();
  });

  for (const action of ['decline', 'cancel'] as const) {
    it(`${action} leaves the question pending and says so; a client without the capability gets what it got before`, async () => {
      const { projectId, run, questionId } = await asking(`What is the app called (${action})?`);
      const before = await call(plain, 'svc_get_session', { projectId, waitSeconds: 30 });
      person.answers.push({ action });
      const asked = person.asked.length;
      const { data, text } = await call(asker, 'svc_get_session', { projectId, waitSeconds: 30 });

      expect(person.asked).toHaveLength(asked + 1);
      expect(data.elicitation).toMatchObject({ questionId, action, answered: false });
      expect(data.elicitation.note).toMatch(/still pending/);
      expect(data.pendingQuestion).toMatchObject({ questionId, kind: 'text' });
      expect(text).toBe(JSON.stringify(data));
      // Byte for byte the session a client without the capability gets, but for the report.
      expect(withoutElicitation(data)).toBe(before.text);
      expect(before.data).not.toHaveProperty('elicitation');
      // The question is answered as ever: with svc_send_message and its questionId.
      await call(plain, 'svc_send_message', { projectId, message: 'Sunny', questionId });
      await waitFor(() => run.answers[0] === 'Sunny');
      run.finish();
    });
  }

  it('an answer that breaks the pattern is refused, and the question stays pending', async () => {
    const { projectId, run, questionId } = await asking('Which identifier?', { pattern: '[a-z]+(\\.[a-z]+)+' });
    person.answers.push({ action: 'accept', content: { answer: 'Not an id' } });
    const { data } = await call(asker, 'svc_get_session', { projectId, waitSeconds: 30 });

    expect(person.asked.at(-1)!.requestedSchema.properties.answer.description).toContain('[a-z]+(\\.[a-z]+)+');
    expect(data.elicitation).toMatchObject({ questionId, action: 'accept', answered: false });
    expect(data.elicitation.note).toMatch(/refused.*still pending/);
    expect(data.pendingQuestion).toMatchObject({ questionId });
    expect(run.answers).toEqual([]);
    run.finish();
  });

  it('a code question stays with the host: nobody is asked, and the result is the same as without the capability', async () => {
    const { projectId, run } = await asking('Write the code', {
      kind: 'code',
      format: { type: 'object' },
      maxLength: 1000,
    });
    const asked = person.asked.length;
    const before = await call(plain, 'svc_get_session', { projectId, waitSeconds: 30 });
    const { data, text } = await call(asker, 'svc_get_session', { projectId, waitSeconds: 30 });

    expect(person.asked).toHaveLength(asked);
    expect(data.pendingQuestion).toMatchObject({ kind: 'code' });
    expect(text).toBe(before.text);
    run.finish();
  });
});

describe('2025-11-25 over HTTP: stateless, so never asked', () => {
  it('a client that declares elicitation gets byte for byte what a client without it gets', async () => {
    const { projectId, run } = await asking('Which flavour?', { options: ['sweet', 'sour'] });
    const without = await call(plainV1, 'svc_get_session', { projectId, waitSeconds: 30 });
    const declared = await call(v1Asker, 'svc_get_session', { projectId, waitSeconds: 30 });

    expect(v1Person.asked).toEqual([]);
    expect(declared.text).toBe(without.text);
    expect(declared.data.pendingQuestion).toMatchObject({ kind: 'text', options: ['sweet', 'sour'] });
    run.finish();
  });
});
