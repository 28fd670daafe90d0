/** SQL for the Expo "latest" update tokens on PostgreSQL (docs/postgresql.md#update-channels). */
import { eq } from 'drizzle-orm';
import type { UpdateChannelRepo } from '../repos.js';
import { newUpdateChannelToken } from '../update-channel-token.js';
import type { PgDb } from './db.js';
import { updateChannels } from './schema.js';

/** One token per project, created on first use; shared by every node of the database. */
export class PgUpdateChannelRepo implements UpdateChannelRepo {
  /** @param db the pool's drizzle handle, or a transaction's */
  constructor(private readonly db: PgDb) {}

  async tokenOf(projectId: string): Promise<string> {
    // One statement when the row exists; a racing node's insert wins and both read its token.
    const found = await this.db
      .select({ token: updateChannels.token })
      .from(updateChannels)
      .where(eq(updateChannels.projectId, projectId));
    if (found[0]) return found[0].token;
    const inserted = await this.db
      .insert(updateChannels)
      .values({ projectId, token: newUpdateChannelToken(), createdAt: new Date().toISOString() })
      .onConflictDoNothing({ target: updateChannels.projectId })
      .returning({ token: updateChannels.token });
    if (inserted[0]) return inserted[0].token;
    const raced = await this.db
      .select({ token: updateChannels.token })
      .from(updateChannels)
      .where(eq(updateChannels.projectId, projectId));
    return raced[0]!.token;
  }

  async projectOf(token: string): Promise<string | null> {
    const rows = await this.db
      .select({ projectId: updateChannels.projectId })
      .from(updateChannels)
      .where(eq(updateChannels.token, token));
    return rows[0]?.projectId ?? null;
  }

  async adopt(projectId: string, token: string, at: string): Promise<boolean> {
    const rows = await this.db
      .insert(updateChannels)
      .values({ projectId, token, createdAt: at })
      .onConflictDoNothing()
      .returning({ projectId: updateChannels.projectId });
    return rows.length > 0;
  }
}
