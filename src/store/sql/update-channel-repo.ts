/** SQL for the Expo "latest" update tokens (docs/postgresql.md#update-channels). */
import { eq } from 'drizzle-orm';
import type { UpdateChannelRepo } from '../repos.js';
import { newUpdateChannelToken } from '../update-channel-token.js';
import type { Dialect } from './dialect.js';

/** One token per project, created on first use; shared by every process and node of the database. */
export class SqlUpdateChannelRepo implements UpdateChannelRepo {
  constructor(private readonly d: Dialect) {}

  async tokenOf(projectId: string): Promise<string> {
    const { updateChannels } = this.d.t;
    const read = () =>
      this.d.db
        .select({ token: updateChannels.token })
        .from(updateChannels)
        .where(eq(updateChannels.projectId, projectId));
    // One statement when the row exists; a racing process's insert wins and both read its token.
    const found = await read();
    if (found[0]) return found[0].token;
    const inserted = await this.d.db
      .insert(updateChannels)
      .values({ projectId, token: newUpdateChannelToken(), createdAt: new Date().toISOString() })
      .onConflictDoNothing({ target: updateChannels.projectId })
      .returning({ token: updateChannels.token });
    if (inserted[0]) return inserted[0].token;
    return (await read())[0]!.token;
  }

  async projectOf(token: string): Promise<string | null> {
    const { updateChannels } = this.d.t;
    const rows = await this.d.db
      .select({ projectId: updateChannels.projectId })
      .from(updateChannels)
      .where(eq(updateChannels.token, token));
    return rows[0]?.projectId ?? null;
  }

  async adopt(projectId: string, token: string, at: string): Promise<boolean> {
    const { updateChannels } = this.d.t;
    const rows = await this.d.db
      .insert(updateChannels)
      .values({ projectId, token, createdAt: at })
      .onConflictDoNothing()
      .returning({ projectId: updateChannels.projectId });
    return rows.length > 0;
  }
}
