/**
 * SQL for the OAuth authorization server (docs/contract.md, "Sign in with OAuth"), on PostgreSQL
 * (the twin of `sqlite/oauth-repo.ts`): clients, pending authorization requests, codes, grants
 * and tokens. Codes and tokens are stored as SHA-256 only; the checks that decide what a row
 * allows live in `auth/oauth-grants.ts`.
 */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { OAuthRepo, OAuthTokenWithGrant, OAuthGrantWithUser } from '../repos.js';
import type {
  OAuthAuthorizationRequestRow,
  OAuthClientRow,
  OAuthCodeRow,
  OAuthGrantRow,
  OAuthTokenRow,
} from '../rows.js';
import { oauthAuthorizationRequests, oauthClients, oauthCodes, oauthGrants, oauthTokens, users } from './schema.js';

/** Reads and writes the OAuth tables. */
export class PgOAuthRepo implements OAuthRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  // Clients

  async findClient(clientId: string): Promise<OAuthClientRow | undefined> {
    return (await this.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId)))[0];
  }

  /** Inserts or replaces the client with the row's id (a refreshed metadata document replaces its copy). */
  async saveClient(row: OAuthClientRow): Promise<void> {
    await this.db
      .insert(oauthClients)
      .values(row)
      .onConflictDoUpdate({
        target: oauthClients.clientId,
        set: { kind: row.kind, metadata: row.metadata, expiresAt: row.expiresAt },
      });
  }

  // Authorization requests

  async insertRequest(row: OAuthAuthorizationRequestRow): Promise<void> {
    await this.db.insert(oauthAuthorizationRequests).values(row);
  }

  async findRequest(id: string): Promise<OAuthAuthorizationRequestRow | undefined> {
    return (await this.db.select().from(oauthAuthorizationRequests).where(eq(oauthAuthorizationRequests.id, id)))[0];
  }

  async setRequestCsrf(id: string, csrfHash: string): Promise<void> {
    await this.db.update(oauthAuthorizationRequests).set({ csrfHash }).where(eq(oauthAuthorizationRequests.id, id));
  }

  /** Marks the request decided; false when it already was (a second submission of the page). */
  async decideRequest(id: string, at: string): Promise<boolean> {
    const done = await this.db
      .update(oauthAuthorizationRequests)
      .set({ decidedAt: at })
      .where(and(eq(oauthAuthorizationRequests.id, id), isNull(oauthAuthorizationRequests.decidedAt)));
    return done.rowCount === 1;
  }

  /** Deletes requests that expired before `now` (they can never be decided). */
  async deleteExpiredRequests(now: string): Promise<void> {
    await this.db.delete(oauthAuthorizationRequests).where(lt(oauthAuthorizationRequests.expiresAt, now));
  }

  // Grants and codes

  async insertGrant(row: OAuthGrantRow): Promise<void> {
    await this.db.insert(oauthGrants).values(row);
  }

  async findGrant(id: string): Promise<OAuthGrantRow | undefined> {
    return (await this.db.select().from(oauthGrants).where(eq(oauthGrants.id, id)))[0];
  }

  async listGrants(userId?: string): Promise<OAuthGrantWithUser[]> {
    const q = this.db
      .select({ grant: oauthGrants, user: users })
      .from(oauthGrants)
      .innerJoin(users, eq(users.id, oauthGrants.userId));
    return (userId ? q.where(eq(oauthGrants.userId, userId)) : q).orderBy(asc(users.name), asc(oauthGrants.createdAt));
  }

  /** Revokes the grant and every token of it (two statements: run it in a transaction to make them one). */
  async revokeGrant(id: string, at: string): Promise<void> {
    await this.db
      .update(oauthGrants)
      .set({ revokedAt: at })
      .where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt)));
    await this.db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.grantId, id), isNull(oauthTokens.revokedAt)));
  }

  async touchGrant(id: string, at: string): Promise<void> {
    await this.db.update(oauthGrants).set({ lastUsedAt: at }).where(eq(oauthGrants.id, id));
  }

  async insertCode(row: OAuthCodeRow): Promise<void> {
    await this.db.insert(oauthCodes).values(row);
  }

  async findCode(hash: string): Promise<OAuthCodeRow | undefined> {
    return (await this.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, hash)))[0];
  }

  /** Marks the code used; false when it already was (a replay). */
  async useCode(hash: string, at: string): Promise<boolean> {
    return (
      (
        await this.db
          .update(oauthCodes)
          .set({ usedAt: at })
          .where(and(eq(oauthCodes.codeHash, hash), isNull(oauthCodes.usedAt)))
      ).rowCount === 1
    );
  }

  /**
   * Deletes codes that expired before `codesBefore` and tokens that expired before `tokensBefore`
   * (an expired token is refused whatever its row says), then the grants left with neither: an
   * approval whose code was never exchanged, or a grant whose every token has expired. Grants with
   * a live token stay, revoked or not, for `token list`. One statement (data-modifying CTEs): the
   * grants are judged on the rows left after both deletes.
   */
  async deleteExpired(codesBefore: string, tokensBefore: string): Promise<void> {
    // The outer DELETE sees the rows as they were before the CTEs' deletes: the codes and tokens
    // that survive are exactly those that have not expired by the bounds.
    await this.db.execute(sql`
      with dc as (delete from oauth_codes where expires_at < ${codesBefore}),
           dt as (delete from oauth_tokens where expires_at < ${tokensBefore})
      delete from oauth_grants g
       where not exists (select 1 from oauth_codes c where c.grant_id = g.id and c.expires_at >= ${codesBefore})
         and not exists (select 1 from oauth_tokens t where t.grant_id = g.id and t.expires_at >= ${tokensBefore})`);
  }

  /** True while the grant's authorization code waits to be exchanged (unused and not expired at `now`). */
  async hasOpenCode(grantId: string, now: string): Promise<boolean> {
    const rows = await this.db
      .select({ id: oauthCodes.grantId })
      .from(oauthCodes)
      .where(and(eq(oauthCodes.grantId, grantId), isNull(oauthCodes.usedAt), sql`${oauthCodes.expiresAt} > ${now}`))
      .limit(1);
    return rows.length > 0;
  }

  // Tokens

  async insertToken(row: OAuthTokenRow): Promise<void> {
    await this.db.insert(oauthTokens).values(row);
  }

  /** The hot path of every request with an OAuth access token: one indexed join. */
  async findToken(hash: string): Promise<OAuthTokenWithGrant | undefined> {
    const rows = await this.db
      .select({ token: oauthTokens, grant: oauthGrants, user: users })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(users, eq(users.id, oauthGrants.userId))
      .where(eq(oauthTokens.tokenHash, hash));
    return rows[0];
  }

  /** Marks a refresh token used; false when it already was (a replay). */
  async useToken(id: string, at: string): Promise<boolean> {
    return (
      (
        await this.db
          .update(oauthTokens)
          .set({ usedAt: at })
          .where(and(eq(oauthTokens.id, id), isNull(oauthTokens.usedAt)))
      ).rowCount === 1
    );
  }

  /** Expiry of the grant's newest refresh token (ISO), or null when it has none. */
  async lastRefreshExpiry(grantId: string): Promise<string | null> {
    const rows = await this.db
      .select({ expiresAt: sql<string | null>`max(${oauthTokens.expiresAt})` })
      .from(oauthTokens)
      .where(and(eq(oauthTokens.grantId, grantId), eq(oauthTokens.kind, 'refresh')));
    return rows[0]?.expiresAt ?? null;
  }

  async revokeToken(id: string, at: string): Promise<void> {
    await this.db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.id, id), isNull(oauthTokens.revokedAt)));
  }
}
