/** SQL for API tokens (stored as SHA-256 only). */
import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from './database.js';
import { apiTokens, users, type ApiTokenRow, type UserRow } from './schema.js';

/** A token row joined with its user, as the authentication check needs it. */
export interface TokenWithUser {
  token: ApiTokenRow;
  user: UserRow;
}

/** Reads and writes API tokens (hashes only). */
export class TokenRepo {
  /** Prepared once: the hot path of every authenticated request. */
  private readonly byHash;

  constructor(private readonly db: Db) {
    this.byHash = db
      .select({ token: apiTokens, user: users })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(eq(apiTokens.tokenHash, sql.placeholder('hash')))
      .prepare();
  }

  findByHash(hash: string): TokenWithUser | undefined {
    return this.byHash.get({ hash });
  }

  insert(row: ApiTokenRow): void {
    this.db.insert(apiTokens).values(row).run();
  }

  findById(id: string): ApiTokenRow | undefined {
    return this.db.select().from(apiTokens).where(eq(apiTokens.id, id)).get();
  }

  revoke(id: string, at: string): void {
    this.db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, id)).run();
  }

  list(userId?: string): TokenWithUser[] {
    const q = this.db.select({ token: apiTokens, user: users }).from(apiTokens).innerJoin(users, eq(users.id, apiTokens.userId));
    return (userId ? q.where(eq(apiTokens.userId, userId)) : q).orderBy(asc(users.name), asc(apiTokens.createdAt)).all();
  }
}
