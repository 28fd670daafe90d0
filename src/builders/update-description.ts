/**
 * The description of an Expo Update inside a published deployment folder (`expo-update.json`,
 * docs/builders.md "Expo updates"): the manifest the updates route serves, less its URLs. The `expo` builder
 * writes it (`expo/update-bundle.ts`); a `command` builder may write its own, so a deployment's
 * description is checked before it is published: its shape, and that every asset path names a
 * regular file inside the folder. A description that fails the check fails the deploy with the
 * reason, instead of a manifest whose assets the asset route would refuse.
 */
import { lstat, readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { z } from 'zod';

/** The description file inside a published update folder (the name `expo/update-bundle.ts` writes and the updates route reads). */
const UPDATE_FILE = 'expo-update.json';

const assetSchema = z.object({
  path: z.string().min(1),
  hash: z.string().min(1),
  key: z.string().min(1),
  contentType: z.string().min(1),
  fileExtension: z.string().optional(),
});

const descriptionSchema = z.object({
  format: z.literal('expo-updates-v1'),
  id: z.string().min(1),
  createdAt: z.string().min(1),
  platform: z.enum(['ios', 'android']),
  sdk: z.number(),
  runtimeVersions: z.array(z.string().min(1)).min(1),
  launchAsset: assetSchema,
  assets: z.array(assetSchema),
  expoClient: z.record(z.string(), z.unknown()),
});

/**
 * Checks the update description in deployment folder `folder`, when it holds one.
 * @returns null when there is none or it is valid; else the reason, naming the file and the path.
 */
export async function updateDescriptionProblem(folder: string): Promise<string | null> {
  const file = join(folder, UPDATE_FILE);
  const text = await readIfFile(file);
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `${UPDATE_FILE} is not JSON`;
  }
  const checked = descriptionSchema.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    return `${UPDATE_FILE} is not an update description: ${issue.path.join('.') || 'the file'}: ${issue.message}`;
  }
  const root = await realpath(folder);
  for (const asset of [checked.data.launchAsset, ...checked.data.assets]) {
    const problem = await assetPathProblem(root, asset.path);
    if (problem) return `${UPDATE_FILE}: asset path ${JSON.stringify(asset.path.slice(0, 200))} ${problem}`;
  }
  return null;
}

/** Why asset path `path` does not name a regular file inside `root` (a real path), or null. */
async function assetPathProblem(root: string, path: string): Promise<string | null> {
  const segments = path.split('/');
  if (
    isAbsolute(path) ||
    path.includes('\\') ||
    path.includes('\0') ||
    segments.some((s) => s === '' || s === '.' || s === '..')
  ) {
    return 'leaves the update folder (it must be relative, with no "..", "." or empty segment)';
  }
  const real = await realpath(join(root, path)).catch(() => null);
  if (real === null) return 'names no file in the update folder';
  const rel = relative(root, real);
  if (rel.startsWith('..') || isAbsolute(rel)) return 'leaves the update folder (through a link)';
  if (!(await lstat(real)).isFile()) return 'is not a regular file';
  return null;
}

/** The text of `file` when it is a regular file (not a link), else null. */
async function readIfFile(file: string): Promise<string | null> {
  const info = await lstat(file).catch(() => null);
  if (!info?.isFile()) return null;
  return readFile(file, 'utf8');
}

/**
 * The Expo SDKs the update description in folder `folder` serves (`[58, 54]`): the `sdk` of a
 * single description (`expo-updates-v1`) or of each update of one by SDK (`expo-updates-v1-by-sdk`);
 * `[]` when the folder holds none or it cannot be read.
 */
export async function updateSdksIn(folder: string): Promise<number[]> {
  const text = await readIfFile(join(folder, UPDATE_FILE)).catch(() => null);
  if (text === null) return [];
  try {
    const parsed = JSON.parse(text) as { sdk?: unknown; updates?: { sdk?: unknown }[] };
    const sdks = Array.isArray(parsed.updates) ? parsed.updates.map((u) => u.sdk) : [parsed.sdk];
    return sdks.filter((sdk): sdk is number => typeof sdk === 'number');
  } catch {
    return [];
  }
}
