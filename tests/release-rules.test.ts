/**
 * The release rules (docs/releases.md), as pure functions: the states of a deploy history per
 * channel (serving, rolling_out, superseded, rolled_back), what a channel serves, the rollout
 * buckets (1,000 simulated `eas-client-id`s split within 5 points of the percentage, each client
 * in the same bucket every time, a client without an id never in a rollout), and the changes
 * between two source snapshots.
 */
import { describe, expect, it } from 'vitest';
import { channelHeads, deploymentStates, inRollout, rolloutBucket, type ReleaseFacts } from '../src/core/releases.js';
import {
  describeChanges,
  packSourceFiles,
  sourceChanges,
  sourcePatch,
  unpackSourceFiles,
} from '../src/io/source-snapshot.js';

const deploy = (number: number, channel = 'production', rolloutPercent = 100, rollbackOf: number | null = null) =>
  ({ number, channel, rolloutPercent, rollbackOf }) satisfies ReleaseFacts;

describe('deploy states', () => {
  it('serving, superseded and rolling_out per channel', () => {
    const states = deploymentStates([deploy(1), deploy(2, 'preview'), deploy(3), deploy(4, 'production', 25)]);
    expect(Object.fromEntries(states)).toEqual({ 1: 'superseded', 2: 'serving', 3: 'serving', 4: 'rolling_out' });
  });

  it('a later staged rollout supersedes the earlier one; a deploy at 100 % ends both', () => {
    const rolling = [deploy(1), deploy(2, 'production', 10), deploy(3, 'production', 40)];
    expect(Object.fromEntries(deploymentStates(rolling))).toEqual({ 1: 'serving', 2: 'superseded', 3: 'rolling_out' });
    const ended = [...rolling, deploy(4)];
    expect(Object.fromEntries(deploymentStates(ended))).toEqual({
      1: 'superseded',
      2: 'superseded',
      3: 'superseded',
      4: 'serving',
    });
  });

  it('a rollback serves, and rolls back every deploy of its channel after its target', () => {
    const states = deploymentStates([
      deploy(1),
      deploy(2),
      deploy(3, 'preview'),
      deploy(4, 'production', 50),
      deploy(5, 'production', 100, 1),
    ]);
    expect(Object.fromEntries(states)).toEqual({
      1: 'superseded',
      2: 'rolled_back',
      3: 'serving',
      4: 'rolled_back',
      5: 'serving',
    });
  });

  it('a channel serves its newest full deploy and, above it, its newest rollout', () => {
    expect(channelHeads([deploy(1), deploy(2, 'production', 10)])).toEqual({
      serving: deploy(1),
      rollingOut: deploy(2, 'production', 10),
    });
    expect(channelHeads([deploy(1), deploy(2, 'production', 10), deploy(3, 'production', 100, 1)])).toEqual({
      serving: deploy(3, 'production', 100, 1),
      rollingOut: undefined,
    });
  });
});

describe('rollout buckets', () => {
  // Fixed ids (as Expo generates them: UUIDs), so that the split is the same on every run.
  const ids = Array.from({ length: 1000 }, (_, i) => `7d3c1e2a-0000-4000-8000-${String(i).padStart(12, '0')}`);

  for (const percent of [1, 10, 25, 50, 90])
    it(`puts ${percent} % of 1,000 client ids in a ${percent} % rollout, each one every time`, () => {
      const inside = ids.filter((id) => inRollout('production', id, percent));
      expect(Math.abs((inside.length / ids.length) * 100 - percent)).toBeLessThanOrEqual(5);
      // Stable: the same answer for every request of a client.
      for (const id of ids) expect(inRollout('production', id, percent)).toBe(inside.includes(id));
    });

  it('keeps the clients of a smaller rollout in a larger one, and every client in a 100 % deploy', () => {
    for (const id of ids) {
      if (inRollout('production', id, 10)) expect(inRollout('production', id, 40)).toBe(true);
      expect(inRollout('production', id, 100)).toBe(true);
      expect(rolloutBucket('production', id)).toBe(rolloutBucket('production', id));
    }
  });

  it('never puts a client without an id in a rollout below 100 %', () => {
    expect(inRollout('production', null, 99)).toBe(false);
    expect(inRollout('production', null, 100)).toBe(true);
  });
});

describe('source changes', () => {
  it('names the changed files with their added and removed lines, and diffs them', () => {
    const before = { 'App.tsx': 'a\nb\nc\n', 'src/old.ts': 'x\n', 'same.ts': 's\n' };
    const after = { 'App.tsx': 'a\nB\nc\nd\n', 'src/new.ts': 'y\nz\n', 'same.ts': 's\n' };
    const changes = sourceChanges(before, after);
    expect(changes).toEqual([
      { path: 'App.tsx', added: 2, removed: 1 },
      { path: 'src/new.ts', added: 2, removed: 0 },
      { path: 'src/old.ts', added: 0, removed: 1 },
    ]);
    expect(describeChanges(changes)).toBe('App.tsx (+2 −1), src/new.ts (+2 −0), src/old.ts (+0 −1)');
    const patch = sourcePatch(before, after);
    expect(patch).toContain('--- a/App.tsx');
    expect(patch).toContain('-b\n+B\n');
    expect(patch).toContain('+++ /dev/null');
    expect(unpackSourceFiles(packSourceFiles(after))).toEqual(after);
    expect(unpackSourceFiles(Buffer.from('not gzip'))).toEqual({});
  });
});
