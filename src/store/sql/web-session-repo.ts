/** SQL for web console sessions (stored as SHA-256 only). */
import { and, asc, eq, gt, lt, or, sql } from 'drizzle-orm';
import type { WebSessionRepo, WebSessionWithUser } from '../repos.js';
import type { WebSessionRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes web console sessions (hashes only). */
export class SqlWebSessionRepo implements WebSessionRepo {
  /** Read by every console request: built once. */
  private readonly byHash;

  constructor(private readonly d: Dialect) {
    this.byHash = d.statement((db, { apiTokens, users, webSessions }) =>
      db
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
        .where(eq(webSessions.sessionHash, sql.placeholder('hash'))),
    );
  }

  async insert(row: WebSessionRow): Promise<void> {
    await this.d.db.insert(this.d.t.webSessions).values(row);
  }

  async findByHash(hash: string): Promise<WebSessionWithUser | undefined> {
    const row = await this.byHash.get({ hash });
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
    const { apiTokens, users, webSessions } = this.d.t;
    return this.d.db
      .select({ session: webSessions, userName: users.name, tokenPrefix: apiTokens.displayPrefix })
      .from(webSessions)
      .innerJoin(users, eq(users.id, webSessions.userId))
      .leftJoin(apiTokens, eq(apiTokens.id, webSessions.tokenId))
      .where(and(gt(webSessions.expiresAt, now), userId === undefined ? undefined : eq(webSessions.userId, userId)))
      .orderBy(asc(webSessions.createdAt));
  }

  /** Deletes the session with this id; false when there is none. */
  async deleteById(id: string): Promise<boolean> {
    const { webSessions } = this.d.t;
    return this.d.changes(await this.d.db.delete(webSessions).where(eq(webSessions.id, id))) === 1;
  }

  async deleteByHash(hash: string): Promise<void> {
    const { webSessions } = this.d.t;
    await this.d.db.delete(webSessions).where(eq(webSessions.sessionHash, hash));
  }

  /** Removes sessions that expired before `now` (ISO 8601), and those of revoked tokens. @returns how many. */
  async deleteExpired(now: string): Promise<number> {
    const { apiTokens, webSessions } = this.d.t;
    const revoked = this.d.db
      .select({ id: apiTokens.id })
      .from(apiTokens)
      .where(sql`${apiTokens.revokedAt} is not null`);
    const result = await this.d.db
      .delete(webSessions)
      .where(or(lt(webSessions.expiresAt, now), sql`${webSessions.tokenId} in ${revoked}`));
    return this.d.changes(result);
  }
}
