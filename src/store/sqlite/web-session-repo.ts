/** SQL for web console sessions (stored as SHA-256 only). */
import { and, asc, eq, gt, lt, or, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { WebSessionRepo, WebSessionWithUser } from '../repos.js';
import { apiTokens, users, webSessions } from './schema.js';
import type { WebSessionRow } from '../rows.js';

/** Reads and writes web console sessions (hashes only). */
export class SqliteWebSessionRepo implements WebSessionRepo {
  constructor(private readonly db: Db) {}

  async insert(row: WebSessionRow): Promise<void> {
    this.db.insert(webSessions).values(row).run();
  }

  async findByHash(hash: string): Promise<WebSessionWithUser | undefined> {
    const row = this.db
      .select({
        session: webSessions,
        user: users,
        tokenRevokedAt: apiTokens.revokedAt,
        tokenExpiresAt: apiTokens.expiresAt,
        tokenId: apiTokens.id,
      })
      .from(webSessions)
      .innerJoin(users, eq(users.id, webSessions.userId))
      .leftJoin(apiTokens, eq(apiTokens.id, webSessions.tokenId))
      .where(eq(webSessions.sessionHash, hash))
      .get();
    if (!row) return undefined;
    return {
      session: row.session,
      user: row.user,
      token:
        row.session.tokenId === null
          ? null
          : { revokedAt: row.tokenId === null ? 'deleted' : row.tokenRevokedAt, expiresAt: row.tokenExpiresAt },
    };
  }

  /**
   * Sessions that have not expired at `now` (ISO 8601), of every user or of `userId`, oldest first,
   * with the user's name and the display prefix of the API token each was signed in with (null
   * for a login code).
   */
  async listLive(
    now: string,
    userId?: string,
  ): Promise<{ session: WebSessionRow; userName: string; tokenPrefix: string | null }[]> {
    return this.db
      .select({ session: webSessions, userName: users.name, tokenPrefix: apiTokens.displayPrefix })
      .from(webSessions)
      .innerJoin(users, eq(users.id, webSessions.userId))
      .leftJoin(apiTokens, eq(apiTokens.id, webSessions.tokenId))
      .where(and(gt(webSessions.expiresAt, now), userId === undefined ? undefined : eq(webSessions.userId, userId)))
      .orderBy(asc(webSessions.createdAt))
      .all();
  }

  /** Deletes the session with this id; false when there is none. */
  async deleteById(id: string): Promise<boolean> {
    return this.db.delete(webSessions).where(eq(webSessions.id, id)).run().changes === 1;
  }

  async deleteByHash(hash: string): Promise<void> {
    this.db.delete(webSessions).where(eq(webSessions.sessionHash, hash)).run();
  }

  /** Removes sessions that expired before `now` (ISO 8601), and those of revoked tokens. */
  async deleteExpired(now: string): Promise<number> {
    const revoked = this.db
      .select({ id: apiTokens.id })
      .from(apiTokens)
      .where(sql`${apiTokens.revokedAt} is not null`);
    return this.db
      .delete(webSessions)
      .where(or(lt(webSessions.expiresAt, now), sql`${webSessions.tokenId} in ${revoked}`))
      .run().changes;
  }
}
