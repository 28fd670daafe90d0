/** SQL for API tokens (stored as SHA-256 only). */
import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { TokenRepo, TokenWithUser } from '../repos.js';
import { apiTokens, users } from './schema.js';
import type { ApiTokenRow } from '../rows.js';

/** Reads and writes API tokens (hashes only). */
export class SqliteTokenRepo implements TokenRepo {
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

  async findByHash(hash: string): Promise<TokenWithUser | undefined> {
    return this.byHash.get({ hash });
  }

  async insert(row: ApiTokenRow): Promise<void> {
    this.db.insert(apiTokens).values(row).run();
  }

  async findById(id: string): Promise<ApiTokenRow | undefined> {
    return this.db.select().from(apiTokens).where(eq(apiTokens.id, id)).get();
  }

  async revoke(id: string, at: string): Promise<void> {
    this.db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, id)).run();
  }

  async list(userId?: string): Promise<TokenWithUser[]> {
    const q = this.db
      .select({ token: apiTokens, user: users })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId));
    return (userId ? q.where(eq(apiTokens.userId, userId)) : q)
      .orderBy(asc(users.name), asc(apiTokens.createdAt))
      .all();
  }
}
