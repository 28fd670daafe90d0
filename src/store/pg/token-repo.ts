/** SQL for API tokens, on PostgreSQL (the twin of `sqlite/token-repo.ts`). */
import { asc, eq } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { TokenRepo, TokenWithUser } from '../repos.js';
import type { ApiTokenRow } from '../rows.js';
import { apiTokens, users } from './schema.js';

/** Reads and writes API tokens (hashes only). */
export class PgTokenRepo implements TokenRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  /** The hot path of every authenticated request: one indexed join. */
  async findByHash(hash: string): Promise<TokenWithUser | undefined> {
    const rows = await this.db
      .select({ token: apiTokens, user: users })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(eq(apiTokens.tokenHash, hash));
    return rows[0];
  }

  async insert(row: ApiTokenRow): Promise<void> {
    await this.db.insert(apiTokens).values(row);
  }

  async findById(id: string): Promise<ApiTokenRow | undefined> {
    return (await this.db.select().from(apiTokens).where(eq(apiTokens.id, id)))[0];
  }

  async revoke(id: string, at: string): Promise<void> {
    await this.db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, id));
  }

  async list(userId?: string): Promise<TokenWithUser[]> {
    const q = this.db
      .select({ token: apiTokens, user: users })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId));
    return (userId ? q.where(eq(apiTokens.userId, userId)) : q).orderBy(asc(users.name), asc(apiTokens.createdAt));
  }
}
