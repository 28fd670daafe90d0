/**
 * SQL for the OAuth authorization server (docs/contract.md, "Sign in with OAuth"): clients,
 * pending authorization requests, codes, grants and tokens. Codes and tokens are stored as
 * SHA-256 only; the checks that decide what a row allows live in `auth/oauth-grants.ts`.
 */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { OAuthRepo, OAuthTokenWithGrant, OAuthGrantWithUser } from '../repos.js';
import type {
  OAuthAuthorizationRequestRow,
  OAuthClientRow,
  OAuthCodeRow,
  OAuthGrantRow,
  OAuthTokenRow,
} from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes the OAuth tables. */
export class SqlOAuthRepo implements OAuthRepo {
  /** The hot path of every request with an OAuth access token: one indexed join, built once. */
  private readonly tokenByHash;

  constructor(private readonly d: Dialect) {
    this.tokenByHash = d.statement((db, { oauthGrants, oauthTokens, users }) =>
      db
        .select({ token: oauthTokens, grant: oauthGrants, user: users })
        .from(oauthTokens)
        .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
        .innerJoin(users, eq(users.id, oauthGrants.userId))
        .where(eq(oauthTokens.tokenHash, sql.placeholder('hash'))),
    );
  }

  // Clients

  async findClient(clientId: string): Promise<OAuthClientRow | undefined> {
    const { oauthClients } = this.d.t;
    return (await this.d.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId)))[0];
  }

  /** Inserts or replaces the client with the row's id (a refreshed metadata document replaces its copy). */
  async saveClient(row: OAuthClientRow): Promise<void> {
    const { oauthClients } = this.d.t;
    await this.d.db
      .insert(oauthClients)
      .values(row)
      .onConflictDoUpdate({
        target: oauthClients.clientId,
        set: { kind: row.kind, metadata: row.metadata, expiresAt: row.expiresAt },
      });
  }

  // Authorization requests

  async insertRequest(row: OAuthAuthorizationRequestRow): Promise<void> {
    const { oauthAuthorizationRequests } = this.d.t;
    await this.d.db.insert(oauthAuthorizationRequests).values(row);
  }

  async findRequest(id: string): Promise<OAuthAuthorizationRequestRow | undefined> {
    const { oauthAuthorizationRequests } = this.d.t;
    return (await this.d.db.select().from(oauthAuthorizationRequests).where(eq(oauthAuthorizationRequests.id, id)))[0];
  }

  async setRequestCsrf(id: string, csrfHash: string): Promise<void> {
    const { oauthAuthorizationRequests } = this.d.t;
    await this.d.db.update(oauthAuthorizationRequests).set({ csrfHash }).where(eq(oauthAuthorizationRequests.id, id));
  }

  /** Marks the request decided; false when it already was (a second submission of the page). */
  async decideRequest(id: string, at: string): Promise<boolean> {
    const requests = this.d.t.oauthAuthorizationRequests;
    return this.once(
      this.d.db
        .update(requests)
        .set({ decidedAt: at })
        .where(and(eq(requests.id, id), isNull(requests.decidedAt))),
    );
  }

  /** Deletes requests that expired before `now` (they can never be decided). */
  async deleteExpiredRequests(now: string): Promise<void> {
    const { oauthAuthorizationRequests } = this.d.t;
    await this.d.db.delete(oauthAuthorizationRequests).where(lt(oauthAuthorizationRequests.expiresAt, now));
  }

  // Grants and codes

  async insertGrant(row: OAuthGrantRow): Promise<void> {
    const { oauthGrants } = this.d.t;
    await this.d.db.insert(oauthGrants).values(row);
  }

  async findGrant(id: string): Promise<OAuthGrantRow | undefined> {
    const { oauthGrants } = this.d.t;
    return (await this.d.db.select().from(oauthGrants).where(eq(oauthGrants.id, id)))[0];
  }

  async listGrants(userId?: string): Promise<OAuthGrantWithUser[]> {
    const { oauthGrants, users } = this.d.t;
    return this.d.db
      .select({ grant: oauthGrants, user: users })
      .from(oauthGrants)
      .innerJoin(users, eq(users.id, oauthGrants.userId))
      .where(userId === undefined ? undefined : eq(oauthGrants.userId, userId))
      .orderBy(asc(users.name), asc(oauthGrants.createdAt));
  }

  /** Revokes the grant and every token of it (two statements: run it in a transaction to make them one). */
  async revokeGrant(id: string, at: string): Promise<void> {
    const { oauthGrants, oauthTokens } = this.d.t;
    await this.d.db
      .update(oauthGrants)
      .set({ revokedAt: at })
      .where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt)));
    await this.d.db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.grantId, id), isNull(oauthTokens.revokedAt)));
  }

  async touchGrant(id: string, at: string): Promise<void> {
    const { oauthGrants } = this.d.t;
    await this.d.db.update(oauthGrants).set({ lastUsedAt: at }).where(eq(oauthGrants.id, id));
  }

  async insertCode(row: OAuthCodeRow): Promise<void> {
    const { oauthCodes } = this.d.t;
    await this.d.db.insert(oauthCodes).values(row);
  }

  async findCode(hash: string): Promise<OAuthCodeRow | undefined> {
    const { oauthCodes } = this.d.t;
    return (await this.d.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, hash)))[0];
  }

  /** Marks the code used; false when it already was (a replay). */
  async useCode(hash: string, at: string): Promise<boolean> {
    const codes = this.d.t.oauthCodes;
    return this.once(
      this.d.db
        .update(codes)
        .set({ usedAt: at })
        .where(and(eq(codes.codeHash, hash), isNull(codes.usedAt))),
    );
  }

  /**
   * Deletes codes that expired before `codesBefore` and tokens that expired before `tokensBefore`
   * (an expired token is refused whatever its row says), then the grants left with neither: an
   * approval whose code was never exchanged, or a grant whose every token has expired. Grants with
   * a live token stay, revoked or not, for `token list`. The grants are judged by the bounds, not
   * by what the other two deletes left, so the three statements may run in any order, each its own
   * auto-commit (a sweep cut short leaves rows the next one deletes).
   */
  async deleteExpired(codesBefore: string, tokensBefore: string): Promise<void> {
    const { oauthCodes, oauthGrants, oauthTokens } = this.d.t;
    await this.d.db
      .delete(oauthGrants)
      .where(
        and(
          sql`not exists (select 1 from ${oauthCodes} where ${oauthCodes.grantId} = ${oauthGrants.id} and ${oauthCodes.expiresAt} >= ${codesBefore})`,
          sql`not exists (select 1 from ${oauthTokens} where ${oauthTokens.grantId} = ${oauthGrants.id} and ${oauthTokens.expiresAt} >= ${tokensBefore})`,
        ),
      );
    await this.d.db.delete(oauthCodes).where(lt(oauthCodes.expiresAt, codesBefore));
    await this.d.db.delete(oauthTokens).where(lt(oauthTokens.expiresAt, tokensBefore));
  }

  /** True while the grant's authorization code waits to be exchanged (unused and not expired at `now`). */
  async hasOpenCode(grantId: string, now: string): Promise<boolean> {
    const { oauthCodes } = this.d.t;
    const rows = await this.d.db
      .select({ id: oauthCodes.grantId })
      .from(oauthCodes)
      .where(and(eq(oauthCodes.grantId, grantId), isNull(oauthCodes.usedAt), sql`${oauthCodes.expiresAt} > ${now}`))
      .limit(1);
    return rows.length > 0;
  }

  // Tokens

  async insertToken(row: OAuthTokenRow): Promise<void> {
    const { oauthTokens } = this.d.t;
    await this.d.db.insert(oauthTokens).values(row);
  }

  async findToken(hash: string): Promise<OAuthTokenWithGrant | undefined> {
    return this.tokenByHash.get({ hash });
  }

  /** Marks a refresh token used; false when it already was (a replay). */
  async useToken(id: string, at: string): Promise<boolean> {
    const tokens = this.d.t.oauthTokens;
    return this.once(
      this.d.db
        .update(tokens)
        .set({ usedAt: at })
        .where(and(eq(tokens.id, id), isNull(tokens.usedAt))),
    );
  }

  /** Expiry of the grant's newest refresh token (ISO), or null when it has none. */
  async lastRefreshExpiry(grantId: string): Promise<string | null> {
    const { oauthTokens } = this.d.t;
    const rows = await this.d.db
      .select({ expiresAt: sql<string | null>`max(${oauthTokens.expiresAt})` })
      .from(oauthTokens)
      .where(and(eq(oauthTokens.grantId, grantId), eq(oauthTokens.kind, 'refresh')));
    return rows[0]?.expiresAt ?? null;
  }

  async revokeToken(id: string, at: string): Promise<void> {
    const { oauthTokens } = this.d.t;
    await this.d.db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.id, id), isNull(oauthTokens.revokedAt)));
  }

  /** Runs a compare-and-set UPDATE. @returns true when it changed the row: the first use, not a replay. */
  private async once(update: PromiseLike<unknown>): Promise<boolean> {
    return this.d.changes(await update) === 1;
  }
}
