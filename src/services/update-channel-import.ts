/**
 * The one-time import of the Expo "latest" update tokens that earlier versions kept as files
 * (`<dataDir>/expo-updates/channels/project-<id>`, holding the token), into the store's update
 * channels (docs/postgresql.md#update-channels): a phone that follows a project's
 * `/updates/latest/<token>` URL keeps getting its updates after the upgrade.
 */
import { readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import type { UpdateChannelRepo } from '../store/repos.js';
import { UPDATE_CHANNEL_TOKEN } from '../store/update-channel-token.js';

const PROJECT_FILE = /^project-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * Imports the token files of `dataDir`, if any, then renames their folder to `channels.imported`
 * (kept for a downgrade; never read again), so this runs once. A token whose project no longer
 * exists, or a project that has a token in the store already, is skipped.
 * @returns how many tokens were recorded.
 * @throws the store's error when it fails (the folder stays, so the next start tries again).
 */
export async function importUpdateChannelFiles(
  dataDir: string,
  channels: Pick<UpdateChannelRepo, 'adopt'>,
  logger: Logger,
): Promise<number> {
  const dir = join(dataDir, 'expo-updates', 'channels');
  const names = await readdir(dir).catch(() => null);
  if (!names) return 0;
  let imported = 0;
  const at = new Date().toISOString();
  for (const name of names) {
    const projectId = PROJECT_FILE.exec(name)?.[1];
    if (!projectId) continue;
    const token = (await readFile(join(dir, name), 'utf8').catch(() => '')).trim();
    if (!UPDATE_CHANNEL_TOKEN.test(token)) continue;
    try {
      if (await channels.adopt(projectId, token, at)) imported++;
    } catch (error) {
      // A project deleted since (foreign key): its URL has nothing left to serve.
      if (!isForeignKeyError(error)) throw error;
    }
  }
  await rename(dir, `${dir}.imported`).catch((error: NodeJS.ErrnoException) => {
    // Another process on this data dir imported them at the same time.
    if (error.code !== 'ENOENT') throw error;
  });
  if (imported > 0)
    logger.info({ tokens: imported }, 'imported the Expo "latest" update tokens kept as files by an earlier version');
  return imported;
}

/** SQLite's `SQLITE_CONSTRAINT_FOREIGNKEY`, PostgreSQL's 23503 (drizzle wraps the driver's error as its `cause`). */
function isForeignKeyError(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown } | null | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || e.code === '23503') return true;
  }
  return false;
}
