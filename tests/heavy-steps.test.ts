/**
 * The fair heavy-step slots (src/builders/heavy-steps.ts) on their own, with no clock: each step is
 * a promise the test settles by hand, and the test reads the order in which steps started. Then how
 * a stopped step's reason is told (src/builders/expo/step-bounds.ts). A real pathological type
 * check on the real toolchain is tests/expo/expo-heavy-steps.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { HeavyStepSemaphore } from '../src/builders/heavy-steps.js';
import { boundPassed, TYPE_CHECK_BOUNDS } from '../src/builders/expo/step-bounds.js';

/** A step the test ends by hand; `started` records its name when it gets a slot. */
function stepOf(started: string[], name: string) {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return {
    fn: async () => {
      started.push(name);
      await done;
      return name;
    },
    end,
  };
}

/** Lets granted steps run up to their first await. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('heavy step slots shared fairly across users', () => {
  it('serves waiting users round-robin, FIFO within a user', async () => {
    const slots = new HeavyStepSemaphore(1);
    const started: string[] = [];
    const signal = new AbortController().signal;
    const steps = new Map<string, ReturnType<typeof stepOf>>();
    const runs: Array<Promise<string>> = [];
    // Alice holds the slot and queues three more; Bob and Carol queue after her.
    for (const [owner, name] of [
      ['alice', 'a1'],
      ['alice', 'a2'],
      ['alice', 'a3'],
      ['alice', 'a4'],
      ['bob', 'b1'],
      ['bob', 'b2'],
      ['carol', 'c1'],
    ] as const) {
      const step = stepOf(started, name);
      steps.set(name, step);
      runs.push(slots.runFor(owner, signal, step.fn));
    }
    await settle();
    expect(started).toEqual(['a1']);
    expect(slots.waiting).toBe(6);
    // Each freed slot goes to the user served longest ago: Bob and Carol before Alice's second step.
    for (const name of ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']) {
      expect(started.at(-1)).toBe(name);
      steps.get(name)!.end();
      await settle();
    }
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(await Promise.all(runs)).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'c1']);
    expect(slots.running).toBe(0);
  });

  it('gives a freed slot to the waiting user that holds the fewest', async () => {
    const slots = new HeavyStepSemaphore(2);
    const started: string[] = [];
    const signal = new AbortController().signal;
    const a1 = stepOf(started, 'a1');
    const a2 = stepOf(started, 'a2');
    const a3 = stepOf(started, 'a3');
    const b1 = stepOf(started, 'b1');
    const b2 = stepOf(started, 'b2');
    // Nobody else waits: Alice may take both slots.
    const runs = [
      slots.runFor('alice', signal, a1.fn),
      slots.runFor('alice', signal, a2.fn),
      slots.runFor('alice', signal, a3.fn),
    ];
    runs.push(slots.runFor('bob', signal, b1.fn), slots.runFor('bob', signal, b2.fn));
    await settle();
    expect(started).toEqual(['a1', 'a2']);
    // Alice holds one slot, Bob none: Bob gets the freed one although Alice queued first.
    a1.end();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1']);
    // Now Alice holds none and Bob one: Alice's a3 is next.
    a2.end();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    b1.end();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'b2']);
    a3.end();
    b2.end();
    await Promise.all(runs);
    expect(slots.running).toBe(0);
    expect(slots.waiting).toBe(0);
  });

  it('never lets one user keep a second slot while another user waits', async () => {
    const slots = new HeavyStepSemaphore(2);
    const started: string[] = [];
    const signal = new AbortController().signal;
    const steps = ['a1', 'a2', 'a3', 'a4', 'b1'].map((name) => ({ name, ...stepOf(started, name) }));
    const runs = steps.map((s) => slots.runFor(s.name[0] === 'a' ? 'alice' : 'bob', signal, s.fn));
    await settle();
    expect(started).toEqual(['a1', 'a2']);
    steps[1]!.end(); // a2 ends: Bob, holding none, goes before Alice's a3.
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1']);
    for (const s of steps) s.end();
    await Promise.all(runs);
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  it('drops a cancelled waiter at once and keeps the others in their turn', async () => {
    const slots = new HeavyStepSemaphore(1);
    const started: string[] = [];
    const a1 = stepOf(started, 'a1');
    const b1 = stepOf(started, 'b1');
    const c1 = stepOf(started, 'c1');
    const cancel = new AbortController();
    let queued = 0;
    const first = slots.runFor('alice', new AbortController().signal, a1.fn);
    const cancelled = slots.runFor('bob', cancel.signal, b1.fn, () => queued++);
    const third = slots.runFor('carol', new AbortController().signal, c1.fn, () => queued++);
    expect(queued).toBe(2);
    cancel.abort(new Error('cancelled'));
    await expect(cancelled).rejects.toThrow('cancelled');
    expect(slots.waiting).toBe(1);
    a1.end();
    await settle();
    expect(started).toEqual(['a1', 'c1']);
    c1.end();
    expect(await first).toBe('a1');
    expect(await third).toBe('c1');
    await expect(slots.runFor('dave', cancel.signal, async () => 'never')).rejects.toThrow('cancelled');
    expect(slots.running).toBe(0);
  });

  it('frees the slot when a step throws', async () => {
    const slots = new HeavyStepSemaphore(1);
    const signal = new AbortController().signal;
    await expect(
      slots.runFor('alice', signal, async () => Promise.reject(new Error('tsc ran past its bound'))),
    ).rejects.toThrow('bound');
    expect(slots.running).toBe(0);
    expect(await slots.runFor('bob', signal, async () => 'next')).toBe('next');
  });

  it('refuses a slot count that is not a whole number of at least 1', () => {
    expect(() => new HeavyStepSemaphore(0)).toThrow();
    expect(() => new HeavyStepSemaphore(1.5)).toThrow();
  });
});

describe('the reason a heavy step was stopped', () => {
  const ended = (over: Partial<Parameters<typeof boundPassed>[0]>) => ({
    code: 1,
    signal: null,
    timedOut: false,
    aborted: false,
    tail: [],
    ...over,
  });
  it('names the bound a step went past', () => {
    expect(
      boundPassed(ended({ code: null, signal: 'SIGTERM', timedOut: true }), TYPE_CHECK_BOUNDS, 'tsc --noEmit'),
    ).toBe('tsc --noEmit ran longer than its bound of 120 s and was stopped');
    expect(boundPassed(ended({ code: 152 }), TYPE_CHECK_BOUNDS, 'tsc --noEmit')).toMatch(
      /more than its bound of 120 s of CPU time/,
    );
    expect(boundPassed(ended({ code: null, signal: 'SIGXCPU' }), TYPE_CHECK_BOUNDS, 'tsc --noEmit')).toMatch(
      /CPU time/,
    );
    const oom = [
      'FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory',
    ];
    expect(boundPassed(ended({ code: 134, tail: oom }), TYPE_CHECK_BOUNDS, 'tsc --noEmit')).toMatch(
      /more than its memory bound \(1024 MiB of JavaScript heap, 2048 MiB/,
    );
    expect(boundPassed(ended({ code: null, signal: 'SIGABRT', tail: oom }), TYPE_CHECK_BOUNDS, 'tsc --noEmit')).toMatch(
      /memory bound/,
    );
  });

  it('leaves an ordinary failure, and a diagnostic that only quotes such words, to the caller', () => {
    expect(boundPassed(ended({ code: 0 }), TYPE_CHECK_BOUNDS, 'tsc --noEmit')).toBeNull();
    expect(
      boundPassed(
        ended({
          code: 2,
          tail: ["src/a.ts(1,7): error TS2322: Type '\"heap out of memory\"' is not assignable to type 'number'."],
        }),
        TYPE_CHECK_BOUNDS,
        'tsc --noEmit',
      ),
    ).toBeNull();
  });
});
