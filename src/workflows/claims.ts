/**
 * How an engine hands out its free build slots inside one store transaction (docs/workflows.md
 * "Fair shares" and "Exact bounds"). Both bounds hold at every instant, across any number of
 * engines on one store:
 *
 * - the engine's own bound (`--max-concurrent-workflows`): a slot is taken in this process's
 *   memory (`holdSlot(1)`) before anything is awaited, so two hand-outs running at once in one
 *   process (the pump and a send's `offer`) never both see the same free slot;
 * - the owner's plan bound (`maxRunningWorkflows`): the owner's running workflows are counted and
 *   the claim is made under one lock per owner (the user's row: `SELECT … FOR UPDATE SKIP LOCKED`
 *   on PostgreSQL, where each statement of a READ COMMITTED transaction then sees every claim
 *   committed before the lock was granted; SQLite's `BEGIN IMMEDIATE` serialises every writer).
 *
 * Only workflows recorded with the engine's builder are contenders (docs/operators.md "One
 * builder per deployment").
 *
 * An owner found at its bound, or locked by another node's claim, is passed over for this
 * hand-out and the next owner's contender takes the slot, so a slot never idles while another
 * owner has claimable work; a locked owner is looked at again shortly (`pumpSoon`).
 */
import type { SlotCandidate } from '../store/repos.js';
import type { Tx } from '../store/store.js';
import type { FairShares } from './fair-shares.js';

/** What the hand-out needs of its engine. */
export interface ClaimHost {
  /** The engine's runner id (answered workflows it holds are its contenders). */
  readonly runnerId: string;
  /** The engine's builder: it claims only workflows recorded with it (or with none). */
  readonly builderName: string;
  /** True while the engine has a free slot (slots held with `holdSlot` count as taken). */
  hasFreeSlot(): boolean;
  /** Takes (1) or gives back (-1) a slot held in memory. */
  holdSlot(delta: 1 | -1): void;
  /** The bound on a user's running workflows for `plan`. */
  maxRunning(plan: string): number;
  /** Starts `contender` inside `tx` (claim or resumption). @returns false when it could not. */
  startContender(tx: Tx, contender: SlotCandidate): Promise<boolean>;
  /** Asks for another hand-out shortly (an owner was locked by another transaction). */
  pumpSoon(): void;
}

/** What one hand-out has learnt so far: workflows it could not start, owners it passed over. */
interface HandOut {
  lost: Set<string>;
  passed: Set<string>;
}

/**
 * Inside `tx`: while `host` has a free slot, the next contender (round-robin across owners below
 * their bound, `shares`) is started under its owner's lock (see the file comment).
 */
export async function claimFreeSlots(tx: Tx, host: ClaimHost, shares: FairShares): Promise<void> {
  const state: HandOut = { lost: new Set(), passed: new Set() };
  while (host.hasFreeSlot()) {
    // Taken before the first await: a concurrent hand-out of this process sees the slot as busy.
    host.holdSlot(1);
    let more: boolean;
    try {
      more = await claimNext(tx, host, shares, state);
    } finally {
      host.holdSlot(-1);
    }
    if (!more) return;
  }
}

/** One step of `claimFreeSlots`. @returns false when no contender is left. */
async function claimNext(tx: Tx, host: ClaimHost, shares: FairShares, state: HandOut): Promise<boolean> {
  const contenders = (await tx.workflows.slotCandidates(host.runnerId, host.builderName)).filter(
    (c) => !state.lost.has(c.id) && !state.passed.has(c.ownerId),
  );
  const next = shares.pick(contenders, await tx.workflows.runningByOwner(), (plan) => host.maxRunning(plan));
  if (!next) return false;
  if (!(await tx.tryLock('users', next.ownerId))) {
    // Another node is claiming for this owner now: the next owner takes the slot.
    state.passed.add(next.ownerId);
    host.pumpSoon();
    return true;
  }
  // Counted again under the owner's lock: the first count may miss a claim committed since.
  if ((await tx.workflows.countRunningOf(next.ownerId)) >= host.maxRunning(next.plan)) {
    state.passed.add(next.ownerId);
    return true;
  }
  if (await host.startContender(tx, next)) shares.served(next.ownerId);
  // Another engine took it, it was cancelled, or its project still has live build processes.
  else state.lost.add(next.id);
  return true;
}
