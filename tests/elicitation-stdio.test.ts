/**
 * Questions for the person over stdio, where the connection is the session
 * (docs/contract.md#elicitation): the built bin with the scripted builder, whose deploy asks for
 * the app identifier (a text question with a pattern). A 2025-11-25 client (SDK v1) that declared
 * form elicitation at `initialize` is sent `elicitation/create` during the `svc_get_session` wait
 * that finds the question; a 2026-07-28 client (SDK v2) is answered with `input_required` and
 * retries. Accepting answers it and the deploy goes on to its end (over 2025-11-25 the call hears,
 * while the person answers, that it waits for them); declining leaves it pending
 * (the host answers it with svc_send_message). A client without the capability is never asked.
 */
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { cliToken } from './bin-helpers.js';
import { BIN, tempDir, waitFor } from './helpers.js';

const MODERN = '2026-07-28';

type Answer = { action: 'accept'; content: Record<string, string> } | { action: 'decline' } | { action: 'cancel' };

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** The bin over stdio with the scripted builder, for a fresh data directory. */
function serverParams() {
  const dataDir = tempDir();
  const token = cliToken(dataDir, 'alice');
  return {
    command: process.execPath,
    args: [BIN, 'serve', '--data-dir', dataDir, '--builder', 'scripted', '--scripted-step-ms', '20'],
    env: { PATH: process.env.PATH ?? '', SVC_API_TOKEN: token },
    stderr: 'ignore' as const,
  };
}

/** What one client's person was asked, and the answers they give in turn. */
interface Person {
  asked: Array<{ message: string; requestedSchema: any }>;
  answers: Answer[];
  /** Settles when the person answers (at once when absent). */
  ready?: () => Promise<unknown>;
}

/** A client of `era`; with `person`, it declares form elicitation and lets them answer. */
async function connect(era: 'v1' | 'v2', person?: Person): Promise<ClientV1 | ClientV2> {
  const answer = async (params: unknown): Promise<Answer> => {
    person!.asked.push(params as Person['asked'][number]);
    await person!.ready?.();
    return person!.answers.shift() ?? { action: 'cancel' };
  };
  const capabilities = person ? { elicitation: { form: {} } } : {};
  if (era === 'v1') {
    const client = new ClientV1({ name: 'stdio-v1', version: '1' }, { capabilities });
    if (person) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params));
    await client.connect(new StdioTransportV1(serverParams()));
    closers.push(() => client.close());
    return client;
  }
  const client = new ClientV2(
    { name: 'stdio-v2', version: '1' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  if (person) client.setRequestHandler('elicitation/create', (request) => answer(request.params));
  await client.connect(new StdioTransportV2(serverParams()));
  closers.push(() => client.close());
  return client;
}

/** Progress messages of the calls made with `call`, in order. */
const progress: string[] = [];

async function call(client: ClientV1 | ClientV2, name: string, args: Record<string, unknown>): Promise<any> {
  const onprogress = (p: { message?: string }) => progress.push(p.message ?? '');
  return (
    (await client.callTool({ name, arguments: args }, undefined, { onprogress })) as { structuredContent?: unknown }
  ).structuredContent;
}

/** Starts a deploy (the scripted builder builds first, then asks for the app identifier). */
async function deploy(client: ClientV1 | ClientV2): Promise<string> {
  const project = await call(client, 'svc_create_project', { name: 'Elicited' });
  await call(client, 'svc_send_message', { projectId: project.id, message: 'Deploy it', kind: 'deploy' });
  return project.id as string;
}

/** Waits (45 s at most each) until a wait reports the question or the workflow ends; the last session. */
async function waitUntil(
  client: ClientV1 | ClientV2,
  projectId: string,
  done: (session: any) => boolean,
): Promise<any> {
  for (;;) {
    const session = await call(client, 'svc_get_session', { projectId, waitSeconds: 45 });
    if (done(session) || !session.hasActiveWorkflows) return session;
  }
}

describe.concurrent('over stdio, the wait that finds the app identifier question asks the person', () => {
  for (const era of ['v1', 'v2'] as const) {
    it(
      `SDK ${era} (${era === 'v1' ? '2025-11-25: elicitation/create' : '2026-07-28: input_required'}): accept answers it and the deploy ends`,
      { timeout: 60_000 },
      async () => {
        const person: Person = {
          asked: [],
          answers: [{ action: 'accept', content: { answer: 'com.example.elicited' } }],
        };
        // On 2025-11-25 the person answers during the call: it hears that it waits for them meanwhile.
        if (era === 'v1')
          person.ready = () => waitFor(() => progress.includes('waiting for the user to answer the question'), 30_000);
        const client = await connect(era, person);
        const projectId = await deploy(client);
        const asked = await waitUntil(client, projectId, (session) => session.elicitation !== undefined);

        expect(asked.elicitation).toMatchObject({ action: 'accept', answered: true });
        expect(person.asked).toHaveLength(1);
        expect(person.asked[0]!.message).toMatch(/app identifier/);
        expect(person.asked[0]!.requestedSchema.properties.answer.description).toMatch(/pattern/);
        const end = await waitUntil(client, projectId, () => false);
        expect(end.lastWorkflow).toMatchObject({ kind: 'deploy', status: 'completed' });
        expect(end.pendingQuestion).toBeNull();
      },
    );

    it(
      `SDK ${era}: decline leaves the question pending; the host answers it with svc_send_message`,
      { timeout: 60_000 },
      async () => {
        const person: Person = { asked: [], answers: [{ action: 'decline' }] };
        const client = await connect(era, person);
        const projectId = await deploy(client);
        const declined = await waitUntil(client, projectId, (session) => session.elicitation !== undefined);

        expect(declined.elicitation).toMatchObject({
          action: 'decline',
          answered: false,
          questionId: declined.pendingQuestion.questionId,
        });
        await call(client, 'svc_send_message', {
          projectId,
          message: 'com.example.host',
          questionId: declined.pendingQuestion.questionId,
        });
        const end = await waitUntil(client, projectId, () => false);
        expect(end.lastWorkflow).toMatchObject({ kind: 'deploy', status: 'completed' });
      },
    );
  }

  it(
    'a client without the capability is never asked: the wait reports the question for the host',
    { timeout: 60_000 },
    async () => {
      const client = await connect('v1');
      const projectId = await deploy(client);
      const session = await waitUntil(client, projectId, (s) => s.pendingQuestion !== null);
      expect(session.pendingQuestion).toMatchObject({ kind: 'text', pattern: expect.any(String) });
      expect(session).not.toHaveProperty('elicitation');
    },
  );
});
