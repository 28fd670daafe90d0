/**
 * The `/mcp` requests of one event-loop turn start together inside one look at other processes'
 * commits (src/transports/request-turn.ts, docs/architecture.md "The reply memo"): queued when
 * they arrive, started in the turn's check phase in arrival order, each settling as its own
 * handling does.
 */
import { expect, it } from 'vitest';
import { RequestTurn } from '../src/transports/request-turn.js';

/** A `oneLook` that records, for each start, which look it ran in. */
function recordingLook() {
  let look = 0;
  let inside: number | null = null;
  const oneLook = <T>(fn: () => T): T => {
    inside = ++look;
    try {
      return fn();
    } finally {
      inside = null;
    }
  };
  return { oneLook, current: () => inside };
}

it("starts one turn's requests together, in arrival order, inside one look, and none before the turn's end", async () => {
  const looks = recordingLook();
  const turn = new RequestTurn(looks.oneLook);
  const started: Array<[string, number | null]> = [];
  const start = (name: string) => () => {
    started.push([name, looks.current()]);
    return Promise.resolve();
  };
  const first = [turn.run(start('a')), turn.run(start('b')), turn.run(start('c'))];
  expect(started).toEqual([]);
  await Promise.all(first);
  expect(started).toEqual([
    ['a', 1],
    ['b', 1],
    ['c', 1],
  ]);
  // A request of a later turn gets a look of its own.
  await turn.run(start('d'));
  expect(started.at(-1)).toEqual(['d', 2]);
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
