/**
 * No tenant holds the build machine (docs/builders.md "`expo` (default): real Expo apps", heavy steps): on the real
 * toolchain, with one heavy-step slot, Alice answers her code question with a deep recursive
 * conditional type that makes `tsc` eat memory and time without end, while Bob builds. Alice's
 * type check is stopped at its bound, her answer gets a repair question that says why, and Bob's
 * build, which waited for the slot, completes.
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolResult, waitFor, type TestServer } from '../helpers.js';
import { ensureToolchain, startExpoServer } from './expo-helpers.js';

let server: TestServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  await ensureToolchain();
  server = await startExpoServer({ agent: 'host', heavySteps: 1 });
  alice = server.token('alice');
  bob = server.token('bob');
});

afterAll(() => server?.close());

/**
 * Seven lines of types: each level doubles a union of tuple and object types, and the assignment
 * makes tsc compare two such trees 24 levels deep. Unbounded, tsc runs for minutes and takes
 * gigabytes (measured: past its 1 GiB heap in about 35 s of CPU).
 */
const BOMB = `type Grow<T, N extends unknown[] = []> = N['length'] extends 24
  ? T
  : Grow<T extends unknown ? [T, T] | { a: T; b: T } : never, [...N, 0]>;
type Bomb = Grow<0 | 1>;
export const bomb: Bomb = 0 as unknown as Bomb;
export const other: Grow<2 | 3> = bomb;
`;

const session = (token: string, projectId: string) =>
  toolResult(server.mcpUrl, token, 'svc_get_session', { projectId });
const messagesOf = async (token: string, projectId: string): Promise<Array<{ content: string }>> =>
  (await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId, limit: 500 })).messages;

async function pending(
  token: string,
  projectId: string,
  notId?: string,
): Promise<{ questionId: string; prompt: string }> {
  return waitFor(
    async () => {
      const q = (await session(token, projectId)).pendingQuestion;
      return q && q.questionId !== notId ? q : null;
    },
    300_000,
    'a code question',
  );
}

/**
 * Whether a `tsc` of the project's workspace runs now: in the build sandbox its command line names
 * the workspace (bubblewrap's `--chdir`); without it, its working folder is in the workspace.
 */
function typeCheckRunning(projectId: string): boolean {
  const lines = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
  return lines.some((line) => {
    if (!line.includes('typescript/bin/tsc') || line.includes('ps -eo')) return false;
    if (line.includes(projectId)) return true;
    try {
      return readlinkSync(`/proc/${line.trim().split(/\s+/)[0]}/cwd`).includes(projectId);
    } catch {
      return false; // gone meanwhile
    }
  });
}

describe('expo builder: heavy steps shared between users', () => {
  it("a pathological type in one user's answer is refused with its reason, and another user's build finishes", async () => {
    const a = await toolResult(server.mcpUrl, alice, 'svc_create_project', { name: 'Types Bomb' });
    const b = await toolResult(server.mcpUrl, bob, 'svc_create_project', { name: 'Plain App' });
    await toolResult(server.mcpUrl, alice, 'svc_send_message', {
      projectId: a.id,
      kind: 'build',
      message: 'Add a types helper',
    });
    await toolResult(server.mcpUrl, bob, 'svc_send_message', {
      projectId: b.id,
      kind: 'build',
      message: 'Make it green',
    });
    const aliceQuestion = await pending(alice, a.id);
    const bobQuestion = await pending(bob, b.id);

    const bomb = JSON.stringify({ summary: 'Adds a types helper', files: [{ path: 'src/types.ts', content: BOMB }] });
    await toolResult(server.mcpUrl, alice, 'svc_send_message', {
      projectId: a.id,
      questionId: aliceQuestion.questionId,
      message: bomb,
    });
    // Alice's type check holds the one slot; then Bob's build (deterministic edits) needs it.
    // "Staging" is said before the check asks for the slot: wait for its tsc process itself.
    await waitFor(
      async () => (await messagesOf(alice, a.id)).some((m) => m.content.startsWith('Staging 1 file')),
      120_000,
      "Alice's type check to start",
    );
    await waitFor(() => typeCheckRunning(a.id), 120_000, "Alice's tsc to run");
    await toolResult(server.mcpUrl, bob, 'svc_send_message', {
      projectId: b.id,
      questionId: bobQuestion.questionId,
      message: 'skip',
    });

    const bobDone = await waitFor(
      async () => {
        const s = await session(bob, b.id);
        return s.hasActiveWorkflows ? null : s;
      },
      900_000,
      "Bob's build to finish",
    );
    expect(bobDone.lastWorkflow.status, JSON.stringify(bobDone.lastWorkflow.error)).toBe('completed');
    expect(bobDone.previewUrls.some((p: { platform: string }) => p.platform === 'web')).toBe(true);
    expect((await messagesOf(bob, b.id)).some((m) => m.content.startsWith('Waiting for a heavy-step slot'))).toBe(true);

    // Alice's answer was refused with the bound it went past, and she is asked for a repair.
    const repair = await pending(alice, a.id, aliceQuestion.questionId);
    expect(repair.prompt).toMatch(
      /tsc --noEmit (ran longer than its bound of 120 s|used more than its bound of 120 s of CPU time|needed more than its memory bound)/,
    );
    const failed = (await messagesOf(alice, a.id)).find((m) => m.content.startsWith('Type check failed (answer 1'));
    expect(failed?.content).toMatch(/bound/);
    const cancelled = await toolResult(server.mcpUrl, alice, 'svc_cancel_workflow', { projectId: a.id });
    expect(cancelled.cancelled).toBe(true);
  });
});
