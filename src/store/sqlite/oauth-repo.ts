/**
 * SQL for the OAuth authorization server (docs/contract.md, "Sign in with OAuth"): clients,
 * pending authorization requests, codes, grants and tokens. Codes and tokens are stored as
 * SHA-256 only; the checks that decide what a row allows live in `auth/oauth-grants.ts`.
 */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { OAuthRepo, OAuthTokenWithGrant, OAuthGrantWithUser } from '../repos.js';
import { oauthAuthorizationRequests, oauthClients, oauthCodes, oauthGrants, oauthTokens, users } from './schema.js';
import type {
  OAuthAuthorizationRequestRow,
  OAuthClientRow,
  OAuthCodeRow,
  OAuthGrantRow,
  OAuthTokenRow,
} from '../rows.js';

/** Reads and writes the OAuth tables. */
export class SqliteOAuthRepo implements OAuthRepo {
  /** Prepared once: the hot path of every request with an OAuth access token. */
  private readonly tokenByHash;

  constructor(private readonly db: Db) {
    this.tokenByHash = db
      .select({ token: oauthTokens, grant: oauthGrants, user: users })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(users, eq(users.id, oauthGrants.userId))
      .where(eq(oauthTokens.tokenHash, sql.placeholder('hash')))
      .prepare();
  }

  // Clients

  async findClient(clientId: string): Promise<OAuthClientRow | undefined> {
    return this.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId)).get();
  }

  /** Inserts or replaces the client with the row's id (a refreshed metadata document replaces its copy). */
  async saveClient(row: OAuthClientRow): Promise<void> {
    this.db
      .insert(oauthClients)
      .values(row)
      .onConflictDoUpdate({
        target: oauthClients.clientId,
        set: { kind: row.kind, metadata: row.metadata, expiresAt: row.expiresAt },
      })
      .run();
  }

  // Authorization requests

  async insertRequest(row: OAuthAuthorizationRequestRow): Promise<void> {
    this.db.insert(oauthAuthorizationRequests).values(row).run();
  }

  async findRequest(id: string): Promise<OAuthAuthorizationRequestRow | undefined> {
    return this.db.select().from(oauthAuthorizationRequests).where(eq(oauthAuthorizationRequests.id, id)).get();
  }

  async setRequestCsrf(id: string, csrfHash: string): Promise<void> {
    this.db.update(oauthAuthorizationRequests).set({ csrfHash }).where(eq(oauthAuthorizationRequests.id, id)).run();
  }

  /** Marks the request decided; false when it already was (a second submission of the page). */
  async decideRequest(id: string, at: string): Promise<boolean> {
    const done = this.db
      .update(oauthAuthorizationRequests)
      .set({ decidedAt: at })
      .where(and(eq(oauthAuthorizationRequests.id, id), isNull(oauthAuthorizationRequests.decidedAt)))
      .run();
    return done.changes === 1;
  }

  /** Deletes requests that expired before `now` (they can never be decided). */
  async deleteExpiredRequests(now: string): Promise<void> {
    this.db.delete(oauthAuthorizationRequests).where(lt(oauthAuthorizationRequests.expiresAt, now)).run();
  }

  // Grants and codes

  async insertGrant(row: OAuthGrantRow): Promise<void> {
    this.db.insert(oauthGrants).values(row).run();
  }

  async findGrant(id: string): Promise<OAuthGrantRow | undefined> {
    return this.db.select().from(oauthGrants).where(eq(oauthGrants.id, id)).get();
  }

  async listGrants(userId?: string): Promise<OAuthGrantWithUser[]> {
    const q = this.db
      .select({ grant: oauthGrants, user: users })
      .from(oauthGrants)
      .innerJoin(users, eq(users.id, oauthGrants.userId));
    return (userId ? q.where(eq(oauthGrants.userId, userId)) : q)
      .orderBy(asc(users.name), asc(oauthGrants.createdAt))
      .all();
  }

  /** Revokes the grant and every token of it. */
  async revokeGrant(id: string, at: string): Promise<void> {
    this.db
      .update(oauthGrants)
      .set({ revokedAt: at })
      .where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt)))
      .run();
    this.db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.grantId, id), isNull(oauthTokens.revokedAt)))
      .run();
  }

  async touchGrant(id: string, at: string): Promise<void> {
    this.db.update(oauthGrants).set({ lastUsedAt: at }).where(eq(oauthGrants.id, id)).run();
  }

  async insertCode(row: OAuthCodeRow): Promise<void> {
    this.db.insert(oauthCodes).values(row).run();
  }

  async findCode(hash: string): Promise<OAuthCodeRow | undefined> {
    return this.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, hash)).get();
  }

  /** Marks the code used; false when it already was (a replay). */
  async useCode(hash: string, at: string): Promise<boolean> {
    return (
      this.db
        .update(oauthCodes)
        .set({ usedAt: at })
        .where(and(eq(oauthCodes.codeHash, hash), isNull(oauthCodes.usedAt)))
        .run().changes === 1
    );
  }

  /**
   * Deletes codes that expired before `codesBefore` and tokens that expired before `tokensBefore`
   * (an expired token is refused whatever its row says), then the grants left with neither: an
   * approval whose code was never exchanged, or a grant whose every token has expired. Grants with
   * a live token stay, revoked or not, for `token list`.
   */
  async deleteExpired(codesBefore: string, tokensBefore: string): Promise<void> {
    this.db.transaction((tx) => {
      tx.delete(oauthCodes).where(lt(oauthCodes.expiresAt, codesBefore)).run();
      tx.delete(oauthTokens).where(lt(oauthTokens.expiresAt, tokensBefore)).run();
      tx.delete(oauthGrants)
        .where(
          and(
            sql`not exists (select 1 from ${oauthCodes} where ${oauthCodes.grantId} = ${oauthGrants.id})`,
            sql`not exists (select 1 from ${oauthTokens} where ${oauthTokens.grantId} = ${oauthGrants.id})`,
          ),
        )
        .run();
    });
  }

  /** True while the grant's authorization code waits to be exchanged (unused and not expired at `now`). */
  async hasOpenCode(grantId: string, now: string): Promise<boolean> {
    return (
      this.db
        .select({ id: oauthCodes.grantId })
        .from(oauthCodes)
        .where(and(eq(oauthCodes.grantId, grantId), isNull(oauthCodes.usedAt), sql`${oauthCodes.expiresAt} > ${now}`))
        .get() !== undefined
    );
  }

  // Tokens

  async insertToken(row: OAuthTokenRow): Promise<void> {
    this.db.insert(oauthTokens).values(row).run();
  }

  async findToken(hash: string): Promise<OAuthTokenWithGrant | undefined> {
    return this.tokenByHash.get({ hash });
  }

  /** Marks a refresh token used; false when it already was (a replay). */
  async useToken(id: string, at: string): Promise<boolean> {
    return (
      this.db
        .update(oauthTokens)
        .set({ usedAt: at })
        .where(and(eq(oauthTokens.id, id), isNull(oauthTokens.usedAt)))
        .run().changes === 1
    );
  }

  /** Expiry of the grant's newest refresh token (ISO), or null when it has none. */
  async lastRefreshExpiry(grantId: string): Promise<string | null> {
    const row = this.db
      .select({ expiresAt: sql<string | null>`max(${oauthTokens.expiresAt})` })
      .from(oauthTokens)
      .where(and(eq(oauthTokens.grantId, grantId), eq(oauthTokens.kind, 'refresh')))
      .get();
    return row?.expiresAt ?? null;
  }

  async revokeToken(id: string, at: string): Promise<void> {
    this.db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.id, id), isNull(oauthTokens.revokedAt)))
      .run();
  }
}
