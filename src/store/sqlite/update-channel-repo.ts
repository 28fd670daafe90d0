/** SQL for the Expo "latest" update tokens (docs/postgresql.md#update-channels). */
import { eq } from 'drizzle-orm';
import type { Db } from './db.js';
import type { UpdateChannelRepo } from '../repos.js';
import { newUpdateChannelToken } from '../update-channel-token.js';
import { updateChannels } from './schema.js';

/** One token per project, created on first use. */
export class SqliteUpdateChannelRepo implements UpdateChannelRepo {
  constructor(private readonly db: Db) {}

  async tokenOf(projectId: string): Promise<string> {
    const found = this.db
      .select({ token: updateChannels.token })
      .from(updateChannels)
      .where(eq(updateChannels.projectId, projectId))
      .get();
    if (found) return found.token;
    // A racing process's row wins: the read after the insert returns whichever token is stored.
    this.db
      .insert(updateChannels)
      .values({ projectId, token: newUpdateChannelToken(), createdAt: new Date().toISOString() })
      .onConflictDoNothing({ target: updateChannels.projectId })
      .run();
    return this.db
      .select({ token: updateChannels.token })
      .from(updateChannels)
      .where(eq(updateChannels.projectId, projectId))
      .get()!.token;
  }

  async projectOf(token: string): Promise<string | null> {
    return (
      this.db
        .select({ projectId: updateChannels.projectId })
        .from(updateChannels)
        .where(eq(updateChannels.token, token))
        .get()?.projectId ?? null
    );
  }

  async adopt(projectId: string, token: string, at: string): Promise<boolean> {
    return (
      this.db.insert(updateChannels).values({ projectId, token, createdAt: at }).onConflictDoNothing().run().changes > 0
    );
  }
}
