/**
 * The `/mcp` requests of one event-loop turn start in its check phase, one after another, under
 * one shared look at other processes' commits (src/transports/request-turn.ts,
 * docs/architecture.md "The reply memo"): queued when they arrive, started in arrival order, each
 * when the one before it was answered (or, behind one that waits on I/O, in the next check phase),
 * each settling as its own handling does.
 */
import { expect, it } from 'vitest';
import { RequestTurn } from '../src/transports/request-turn.js';

/** A `oneLook` that records, for each start, the shared look it ran under (numbered per object). */
function recordingLook() {
  const numbers = new Map<object, number>();
  let inside: number | null = null;
  const oneLook = <T>(fn: () => T, shared?: { looked: boolean }): T => {
    const key = shared ?? {};
    if (!numbers.has(key)) numbers.set(key, numbers.size + 1);
    inside = numbers.get(key)!;
    try {
      return fn();
    } finally {
      inside = null;
    }
  };
  return { oneLook, current: () => inside };
}

it("starts one turn's requests in arrival order under one shared look, each after the one before it was answered", async () => {
  const looks = recordingLook();
  const turn = new RequestTurn(looks.oneLook);
  const events: string[] = [];
  const start = (name: string) => async () => {
    events.push(`start ${name} look ${looks.current()}`);
    await Promise.resolve();
    await Promise.resolve();
    events.push(`answered ${name}`);
  };
  const first = [turn.run(start('a')), turn.run(start('b')), turn.run(start('c'))];
  expect(events).toEqual([]);
  await Promise.all(first);
  expect(events).toEqual([
    'start a look 1',
    'answered a',
    'start b look 1',
    'answered b',
    'start c look 1',
    'answered c',
  ]);
  // A request of a later turn gets a look of its own.
  await turn.run(start('d'));
  expect(events.at(-2)).toBe('start d look 2');
});

it('starts the rest of a turn in the next check phase when a request waits on I/O', async () => {
  const turn = new RequestTurn((fn) => fn());
  let finish!: () => void;
  const started: string[] = [];
  const blocked = turn.run(() => {
    started.push('blocked');
    return new Promise<void>((resolve) => (finish = resolve));
  });
  const after = turn.run(async () => {
    started.push('after');
  });
  await after;
  expect(started).toEqual(['blocked', 'after']);
  finish();
  await blocked;
});

it("settles each request as its handling does: one's failure, thrown or rejected, is its own", async () => {
  const turn = new RequestTurn((fn) => fn());
  let finish!: () => void;
  const slow = turn.run(() => new Promise<void>((resolve) => (finish = resolve)));
  const thrown = turn.run(() => {
    throw new Error('thrown');
  });
  const rejected = turn.run(() => Promise.reject(new Error('rejected')));
  const fine = turn.run(() => Promise.resolve());
  await expect(thrown).rejects.toThrow('thrown');
  await expect(rejected).rejects.toThrow('rejected');
  await expect(fine).resolves.toBeUndefined();
  let slowDone = false;
  void slow.then(() => (slowDone = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect(slowDone).toBe(false);
  finish();
  await expect(slow).resolves.toBeUndefined();
});
