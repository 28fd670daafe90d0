/** SQL for API tokens (stored as SHA-256 only). */
import { asc, eq, sql } from 'drizzle-orm';
import type { TokenRepo, TokenWithUser } from '../repos.js';
import type { ApiTokenRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes API tokens (hashes only). */
export class SqlTokenRepo implements TokenRepo {
  /** The hot path of every authenticated request: one indexed join, built once. */
  private readonly byHash;

  constructor(private readonly d: Dialect) {
    this.byHash = d.statement((db, { apiTokens, users }) =>
      db
        .select({ token: apiTokens, user: users })
        .from(apiTokens)
        .innerJoin(users, eq(users.id, apiTokens.userId))
        .where(eq(apiTokens.tokenHash, sql.placeholder('hash'))),
    );
  }

  async findByHash(hash: string): Promise<TokenWithUser | undefined> {
    return this.byHash.get({ hash });
  }

  async insert(row: ApiTokenRow): Promise<void> {
    await this.d.db.insert(this.d.t.apiTokens).values(row);
  }

  async findById(id: string): Promise<ApiTokenRow | undefined> {
    const { apiTokens } = this.d.t;
    return (await this.d.db.select().from(apiTokens).where(eq(apiTokens.id, id)))[0];
  }

  async revoke(id: string, at: string): Promise<void> {
    const { apiTokens } = this.d.t;
    await this.d.db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, id));
  }

  async list(userId?: string): Promise<TokenWithUser[]> {
    const { apiTokens, users } = this.d.t;
    const q = this.d.db
      .select({ token: apiTokens, user: users })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId));
    return (userId ? q.where(eq(apiTokens.userId, userId)) : q).orderBy(asc(users.name), asc(apiTokens.createdAt));
  }
}
