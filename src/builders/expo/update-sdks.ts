/**
 * Which of a deployment's updates a phone gets, and what a phone whose Expo Go runs another SDK is
 * told. Expo Go runs exactly one Expo SDK and asks for it with `expo-runtime-version:
 * exposdk:<sdk>.0.0`; a development build asks with the app's own runtime version (`1.0.0`).
 * docs/builders.md "Phones" says the same to people.
 */
import { readFile } from 'node:fs/promises';
import type { BuilderRouteSources, PublishedArtifactInfo } from '../builder-module.js';
import {
  parseDeploymentUpdates,
  UPDATE_FILE,
  type DeploymentUpdates,
  type UpdateDescription,
} from './update-bundle.js';

/** How a phone gets an Expo Go (or another client) for an SDK, per platform (one sentence each). */
export const GET_EXPO_GO = {
  android:
    "Android: Expo Go from Google Play runs the newest SDK; for an older SDK, install that SDK's Expo Go build (expo.dev/go lists them) or use a development build.",
  ios: 'iPhone: Expo Go from the App Store runs SDK 54; for a newer SDK use a development build, `eas go` (Expo Go through TestFlight) or sign.expo.dev.',
} as const;

/** `exposdk:58.0.0` -> 58; null for any other runtime version. */
function sdkOfRuntime(runtimeVersion: string): number | null {
  const match = /^exposdk:(\d+)\.0\.0$/.exec(runtimeVersion);
  return match ? Number(match[1]) : null;
}

/**
 * The update a client of `runtimeVersion` gets: the one whose runtime versions name it, the first
 * (the server's first SDK) when several do (the app's own version).
 */
export function updateForRuntime(updates: DeploymentUpdates, runtimeVersion: string): UpdateDescription | undefined {
  return updates.updates.find((update) => update.runtimeVersions.includes(runtimeVersion));
}

/** The SDKs a deployment serves, in the server's order. */
export function servedSdks(updates: DeploymentUpdates): number[] {
  return updates.updates.map((update) => update.sdk);
}

/**
 * The body of the answer to a client whose runtime version the deployment was not built for:
 * `{ error, runtimeVersion, sdks, failedSdks, howToGetExpoGo }`.
 */
export function runtimeMismatch(
  updates: DeploymentUpdates,
  runtimeVersion: string,
  platform: 'ios' | 'android',
): Record<string, unknown> {
  const sdks = servedSdks(updates);
  const asked = sdkOfRuntime(runtimeVersion);
  const failed = updates.failed.find((f) => f.sdk === asked);
  const what =
    asked === null ? `runtime version ${runtimeVersion}` : `Expo SDK ${asked} (runtime version ${runtimeVersion})`;
  const why = failed ? ` Its SDK ${failed.sdk} export failed: ${failed.reason}` : '';
  return {
    error: `This deployment was not built for ${what}. It serves Expo SDK ${sdks.join(' and ')}: open it with an Expo Go for one of them.${why} ${GET_EXPO_GO[platform]}`,
    runtimeVersion,
    sdks,
    failedSdks: updates.failed,
    howToGetExpoGo: GET_EXPO_GO[platform],
  };
}

/**
 * The updates of an ios/android deployment (its `expo-update.json`), or null for any other
 * artifact or an unreadable description.
 */
export async function readDeploymentUpdates(
  app: BuilderRouteSources,
  row: PublishedArtifactInfo,
): Promise<DeploymentUpdates | null> {
  if (row.kind !== 'deployment' || (row.platform !== 'ios' && row.platform !== 'android') || row.externalUrl)
    return null;
  try {
    // Written by the build: read only from inside the deployment's folder, like any file served.
    const file = await app.artifacts.resolveFile(row.id, UPDATE_FILE);
    if (!file) return null;
    return parseDeploymentUpdates(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
}
