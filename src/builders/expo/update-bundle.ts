/**
 * Turns a native `expo export` into one folder per platform that the server can serve as an Expo
 * Update (Expo Updates protocol v1): the Hermes bundle, the assets, and `expo-update.json`, which
 * holds everything of the manifest but the absolute URLs (built at request time from the public
 * URL). Hashes are computed here, once, at publish time: `hash` is the base64url SHA-256 of the
 * bytes (what the client verifies), `key` the hex MD5 (the file name Metro gives an asset).
 */
import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';

/** The description file inside a published update folder. */
export const UPDATE_FILE = 'expo-update.json';

/** The MIME table, loaded on the first deploy: building it costs every start (README "Start-up time"). */
const mimeTypes = () => import('mime-types');

/** One file of an update. */
export interface UpdateAsset {
  /** Path inside the update folder (`assets/<md5>`, `_expo/static/js/ios/index-<md5>.hbc`). */
  path: string;
  /** base64url (no padding) SHA-256 of the bytes. */
  hash: string;
  /** Hex MD5 of the bytes. */
  key: string;
  contentType: string;
  /** With the dot (`.png`); absent for the launch asset. */
  fileExtension?: string;
}

/** `expo-update.json`: an update's manifest without its URLs. */
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

interface ExportMetadata {
  fileMetadata: Record<string, { bundle: string; assets: Array<{ path: string; ext: string }> }>;
}

/**
 * Copies one platform's files out of a native export folder into `outDir` and writes its
 * `expo-update.json`.
 * @throws Error when the export has no bundle for `platform`, or a path leaves the export folder.
 */
export async function prepareUpdateFolder(
  exportDir: string,
  platform: 'ios' | 'android',
  outDir: string,
  appConfig: Record<string, unknown>,
  sdk: number,
): Promise<UpdateDescription> {
  const metadata = JSON.parse(await readFile(join(exportDir, 'metadata.json'), 'utf8')) as ExportMetadata;
  const files = metadata.fileMetadata[platform];
  if (!files?.bundle) throw new Error(`The native export has no ${platform} bundle`);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });

  const copy = async (path: string, contentType: string, fileExtension?: string): Promise<UpdateAsset> => {
    const clean = normalize(path);
    if (clean.startsWith('..') || clean.startsWith('/')) throw new Error(`Export path leaves the export folder: ${path}`);
    const bytes = await readFile(join(exportDir, clean));
    await mkdir(dirname(join(outDir, clean)), { recursive: true });
    await copyFile(join(exportDir, clean), join(outDir, clean));
    return {
      path: clean,
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
    assets.push(await copy(asset.path, (await mimeTypes()).lookup(asset.ext) || 'application/octet-stream', `.${asset.ext}`));
  }
  const appVersion = typeof appConfig.version === 'string' ? appConfig.version : '1.0.0';
  const description: UpdateDescription = {
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
  await writeFile(join(outDir, UPDATE_FILE), `${JSON.stringify(description, null, 2)}\n`);
  return description;
}
