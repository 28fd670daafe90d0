/**
 * Turns the native `expo export`s of a deploy (one per served Expo SDK) into one folder per
 * platform that the server can serve as Expo Updates (Expo Updates protocol v1): a sub-folder
 * `sdk-<n>/` per SDK with its Hermes bundle and assets, and `expo-update.json`, which holds, per
 * SDK, everything of the manifest but the absolute URLs (built at request time from the public
 * URL), and the SDKs whose export failed. Hashes are computed here, once, at publish time: `hash`
 * is the base64url SHA-256 of the bytes (what the client verifies), `key` the hex MD5 (the file
 * name Metro gives an asset).
 */
import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';

/** The description file inside a published update folder. */
export const UPDATE_FILE = 'expo-update.json';

/** The MIME table, loaded on the first deploy: building it costs every start (docs/performance.md "Start-up time"). */
const mimeTypes = () => import('mime-types');

/** One file of an update. */
export interface UpdateAsset {
  /** Path inside the deployment's folder (`sdk-58/assets/<md5>`, `sdk-58/_expo/static/js/ios/index-<md5>.hbc`). */
  path: string;
  /** base64url (no padding) SHA-256 of the bytes. */
  hash: string;
  /** Hex MD5 of the bytes. */
  key: string;
  contentType: string;
  /** With the dot (`.png`); absent for the launch asset. */
  fileExtension?: string;
}

/** One SDK's update of a deployment: its manifest without its URLs. */
export interface UpdateDescription {
  format: 'expo-updates-v1';
  /** The update id (a UUID, fixed at publish time). */
  id: string;
  createdAt: string;
  platform: 'ios' | 'android';
  sdk: number;
  /** Runtime versions this update answers: `exposdk:<sdk>.0.0` (Expo Go) and the app's own (`1.0.0`). */
  runtimeVersions: string[];
  launchAsset: UpdateAsset;
  assets: UpdateAsset[];
  /** The app's public config (`app.json`'s `expo` plus `sdkVersion`), sent as `extra.expoClient`. */
  expoClient: Record<string, unknown>;
}

/** An SDK whose export failed in a deploy, and why (one line for people). */
export interface FailedSdk {
  sdk: number;
  reason: string;
}

/** `expo-update.json` of a deployment: an update per SDK it serves, and the SDKs that failed. */
export interface DeploymentUpdates {
  format: 'expo-updates-v1-by-sdk';
  platform: 'ios' | 'android';
  /** In the server's order of SDKs (the first is the default for a client of another runtime). */
  updates: UpdateDescription[];
  failed: FailedSdk[];
}

interface ExportMetadata {
  fileMetadata: Record<string, { bundle: string; assets: Array<{ path: string; ext: string }> }>;
}

/** One SDK's native export folder. */
export interface SdkExport {
  sdk: number;
  /** The `--output-dir` of `expo export --platform ios --platform android`. */
  exportDir: string;
}

/**
 * Writes one platform's deployment folder `outDir`: each SDK's files under `sdk-<n>/` and
 * `expo-update.json` (a `DeploymentUpdates`).
 * @throws Error when an export has no bundle for `platform`, or a path leaves its export folder.
 */
export async function prepareDeploymentFolder(
  exports: readonly SdkExport[],
  failed: readonly FailedSdk[],
  platform: 'ios' | 'android',
  outDir: string,
  appConfig: Record<string, unknown>,
): Promise<DeploymentUpdates> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const updates: UpdateDescription[] = [];
  for (const { sdk, exportDir } of exports)
    updates.push(await copySdkUpdate(exportDir, platform, outDir, `sdk-${sdk}`, appConfig, sdk));
  const description: DeploymentUpdates = { format: 'expo-updates-v1-by-sdk', platform, updates, failed: [...failed] };
  await writeFile(join(outDir, UPDATE_FILE), `${JSON.stringify(description, null, 2)}\n`);
  return description;
}

/** Copies one SDK's files for `platform` from `exportDir` into `<outDir>/<prefix>/` and describes them. */
async function copySdkUpdate(
  exportDir: string,
  platform: 'ios' | 'android',
  outDir: string,
  prefix: string,
  appConfig: Record<string, unknown>,
  sdk: number,
): Promise<UpdateDescription> {
  const metadata = JSON.parse(await readFile(join(exportDir, 'metadata.json'), 'utf8')) as ExportMetadata;
  const files = metadata.fileMetadata[platform];
  if (!files?.bundle) throw new Error(`The native export of SDK ${sdk} has no ${platform} bundle`);

  const copy = async (path: string, contentType: string, fileExtension?: string): Promise<UpdateAsset> => {
    const clean = normalize(path);
    if (clean.startsWith('..') || clean.startsWith('/'))
      throw new Error(`Export path leaves the export folder: ${path}`);
    const bytes = await readFile(join(exportDir, clean));
    const target = join(outDir, prefix, clean);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(join(exportDir, clean), target);
    return {
      path: `${prefix}/${clean}`,
      hash: createHash('sha256').update(bytes).digest('base64url'),
      key: createHash('md5').update(bytes).digest('hex'),
      contentType,
      ...(fileExtension !== undefined && { fileExtension }),
    };
  };

  const launchAsset = await copy(files.bundle, 'application/javascript');
  const assets: UpdateAsset[] = [];
  const seen = new Set<string>();
  for (const asset of files.assets) {
    if (seen.has(asset.path)) continue;
    seen.add(asset.path);
    assets.push(
      await copy(asset.path, (await mimeTypes()).lookup(asset.ext) || 'application/octet-stream', `.${asset.ext}`),
    );
  }
  const appVersion = typeof appConfig.version === 'string' ? appConfig.version : '1.0.0';
  return {
    format: 'expo-updates-v1',
    id: randomUUID(),
    createdAt: new Date().toISOString(),
    platform,
    sdk,
    runtimeVersions: [`exposdk:${sdk}.0.0`, appVersion],
    launchAsset,
    assets,
    expoClient: { ...appConfig, sdkVersion: `${sdk}.0.0`, platforms: ['ios', 'android'] },
  };
}

/**
 * The updates of a deployment's `expo-update.json` text: the per-SDK form, or the single update of
 * a deployment published before deployments served several SDKs.
 * @returns null when the text is neither.
 */
export function parseDeploymentUpdates(text: string): DeploymentUpdates | null {
  const parsed = JSON.parse(text) as Partial<DeploymentUpdates> | UpdateDescription;
  if (parsed.format === 'expo-updates-v1-by-sdk' && Array.isArray(parsed.updates)) {
    return {
      format: parsed.format,
      platform: parsed.platform!,
      updates: parsed.updates,
      failed: Array.isArray(parsed.failed) ? parsed.failed : [],
    };
  }
  if (parsed.format === 'expo-updates-v1') {
    const single = parsed as UpdateDescription;
    return { format: 'expo-updates-v1-by-sdk', platform: single.platform, updates: [single], failed: [] };
  }
  return null;
}
