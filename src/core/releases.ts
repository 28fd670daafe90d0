/**
 * The release rules of deploys (docs/releases.md), declared once: the workflow kinds, the channel
 * name rule and default, the rollout bounds, the states a deploy shows in `svc_get_session`'s
 * `deployments`, and the deterministic bucket of a phone in a staged rollout.
 *
 * A leaf of `core/` (docs/architecture.md, "Layers"): it imports only `node:crypto`.
 */
import { createHash } from 'node:crypto';

/** Every workflow kind: `svc_send_message`'s `kind`, the store's enum, the session's `kind`. */
export const WORKFLOW_KINDS = ['build', 'deploy', 'rollback', 'restore'] as const;
/** One of `WORKFLOW_KINDS`. */
export type WorkflowKind = (typeof WORKFLOW_KINDS)[number];

/** A channel name: a lowercase letter, then up to 31 lowercase letters, digits or hyphens. */
export const CHANNEL_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
/** The channel of a deploy that names none. */
export const DEFAULT_CHANNEL = 'production';
/** Bounds of `rolloutPercent` (the default is the upper one: every phone). */
export const ROLLOUT_MIN = 1;
export const ROLLOUT_MAX = 100;
/** How many deploys `svc_get_session`'s `deployments` lists, newest first. */
export const DEPLOYMENT_HISTORY_LIMIT = 20;

/**
 * The service-relative path of `channel`'s "latest" update URL of the project whose secret token
 * is `token`: `/updates/latest/<token>` for the production channel (the URL earlier versions gave),
 * `/updates/latest/<token>/<channel>` for any other.
 */
export function latestUpdatePathOf(token: string, channel: string): string {
  return channel === DEFAULT_CHANNEL ? `/updates/latest/${token}` : `/updates/latest/${token}/${channel}`;
}

/** The states of a deploy in `deployments` (docs/releases.md "States"). */
export const DEPLOYMENT_STATES = ['serving', 'rolling_out', 'superseded', 'rolled_back'] as const;
/** One of `DEPLOYMENT_STATES`. */
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];

/** What the states are computed from: one published deploy of a project. */
export interface ReleaseFacts {
  number: number;
  channel: string;
  rolloutPercent: number;
  /** The deploy number a rollback published again; null for a deploy. */
  rollbackOf: number | null;
}

/**
 * The state of each deploy of `releases` (any order; each channel on its own), by number:
 * per channel, the newest deploy at 100 % (a rollback is one) is `serving`; a deploy newer than it
 * at less than 100 % is `rolling_out` (only the newest such: an older one is `superseded`); every
 * deploy between a rollback's target and the rollback is `rolled_back`; the rest `superseded`.
 */
export function deploymentStates(releases: readonly ReleaseFacts[]): Map<number, DeploymentState> {
  const states = new Map<number, DeploymentState>();
  const sorted = [...releases].sort((a, b) => a.number - b.number);
  const rolledBack = new Set<number>();
  for (const release of sorted) {
    if (release.rollbackOf === null) continue;
    for (const other of sorted)
      if (other.channel === release.channel && other.number > release.rollbackOf && other.number < release.number)
        rolledBack.add(other.number);
  }
  for (const channel of new Set(sorted.map((r) => r.channel))) {
    const { serving, rollingOut } = channelHeads(sorted.filter((r) => r.channel === channel));
    for (const release of sorted.filter((r) => r.channel === channel)) {
      const state: DeploymentState =
        release.number === serving?.number
          ? 'serving'
          : release.number === rollingOut?.number
            ? 'rolling_out'
            : rolledBack.has(release.number)
              ? 'rolled_back'
              : 'superseded';
      states.set(release.number, state);
    }
  }
  return states;
}

/**
 * What one channel serves, from its deploys (any order): `serving`, the newest deploy at 100 %
 * (undefined when none is), and `rollingOut`, the newest deploy newer than it at less than 100 %.
 */
export function channelHeads<T extends ReleaseFacts>(
  releases: readonly T[],
): { serving: T | undefined; rollingOut: T | undefined } {
  const newestFirst = [...releases].sort((a, b) => b.number - a.number);
  const serving = newestFirst.find((r) => r.rolloutPercent >= ROLLOUT_MAX);
  const rollingOut = newestFirst.find((r) => r.rolloutPercent < ROLLOUT_MAX && r.number > (serving?.number ?? 0));
  return { serving, rollingOut };
}

/**
 * The bucket (0..99) of a phone in `channel`'s rollouts: the first 32 bits of SHA-256 of
 * `channel` and the phone's `eas-client-id`, modulo 100. The same phone is always in the same
 * bucket of a channel, so a rollout that grows keeps the phones it had.
 */
export function rolloutBucket(channel: string, clientId: string): number {
  return createHash('sha256').update(`${channel}\n${clientId}`).digest().readUInt32BE(0) % 100;
}

/**
 * Whether a phone with `clientId` (null: it sent none) gets a rollout of `percent` on `channel`:
 * its bucket is below the percentage. A phone without an id never does (it keeps the channel's
 * previous update).
 */
export function inRollout(channel: string, clientId: string | null, percent: number): boolean {
  if (percent >= ROLLOUT_MAX) return true;
  return clientId !== null && rolloutBucket(channel, clientId) < percent;
}
