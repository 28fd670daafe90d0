/**
 * Both adapters' drizzle schemas give the store port's rows (docs/architecture.md "The store
 * port"): for every table, `SameRow<typeof table.$inferSelect, PortRow>` must be `true`, so a
 * column added, dropped, renamed, made nullable or given another type on either side fails
 * `npm run typecheck` here, naming the row and the columns that drifted. (`WorkflowRow` lets a new
 * row leave `builder` out, so its `Required` form is compared; the PostgreSQL `projects` table has
 * one column of its own, `last_runner_host`, docs/postgresql.md#schema.) At run time the test
 * checks that each schema has a table for every pair below, so a table dropped from a schema fails
 * here too.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as pg from '../../src/store/pg/schema.js';
import type { RowsMatch, SameRow } from '../../src/store/row-check.js';
import type {
  AnswerCheckRow,
  ApiTokenRow,
  ArtifactRow,
  LoginCodeRow,
  MessageRow,
  NodeRow,
  OAuthAuthorizationRequestRow,
  OAuthClientRow,
  OAuthCodeRow,
  OAuthGrantRow,
  OAuthTokenRow,
  ProcessGroupRow,
  ProjectRow,
  QuestionRow,
  SendReceiptRow,
  ReleaseRow,
  UserRow,
  WebSessionRow,
  WorkflowRow,
} from '../../src/store/rows.js';
import * as sqlite from '../../src/store/sqlite/schema.js';
import type * as sqliteReleases from '../../src/store/sqlite/release-schema.js';
import type * as pgReleases from '../../src/store/pg/release-schema.js';

type SqliteRows = RowsMatch<
  [
    SameRow<typeof sqlite.users.$inferSelect, UserRow>,
    SameRow<typeof sqlite.apiTokens.$inferSelect, ApiTokenRow>,
    SameRow<typeof sqlite.projects.$inferSelect, ProjectRow>,
    SameRow<typeof sqlite.workflows.$inferSelect, Required<WorkflowRow>>,
    SameRow<typeof sqlite.messages.$inferSelect, MessageRow>,
    SameRow<typeof sqlite.questions.$inferSelect, QuestionRow>,
    SameRow<typeof sqlite.answerChecks.$inferSelect, AnswerCheckRow>,
    SameRow<typeof sqlite.artifacts.$inferSelect, ArtifactRow>,
    SameRow<typeof sqlite.processGroups.$inferSelect, ProcessGroupRow>,
    SameRow<typeof sqlite.loginCodes.$inferSelect, LoginCodeRow>,
    SameRow<typeof sqlite.oauthClients.$inferSelect, OAuthClientRow>,
    SameRow<typeof sqlite.oauthAuthorizationRequests.$inferSelect, OAuthAuthorizationRequestRow>,
    SameRow<typeof sqlite.oauthGrants.$inferSelect, OAuthGrantRow>,
    SameRow<typeof sqlite.oauthCodes.$inferSelect, OAuthCodeRow>,
    SameRow<typeof sqlite.oauthTokens.$inferSelect, OAuthTokenRow>,
    SameRow<typeof sqlite.webSessions.$inferSelect, WebSessionRow>,
    SameRow<typeof sqlite.nodes.$inferSelect, NodeRow>,
    SameRow<typeof sqlite.sendReceipts.$inferSelect, SendReceiptRow>,
    SameRow<typeof sqliteReleases.releases.$inferSelect, ReleaseRow>,
  ]
>;

type PgRows = RowsMatch<
  [
    SameRow<typeof pg.users.$inferSelect, UserRow>,
    SameRow<typeof pg.apiTokens.$inferSelect, ApiTokenRow>,
    SameRow<Omit<typeof pg.projects.$inferSelect, 'lastRunnerHost'>, ProjectRow>,
    SameRow<typeof pg.workflows.$inferSelect, Required<WorkflowRow>>,
    SameRow<typeof pg.messages.$inferSelect, MessageRow>,
    SameRow<typeof pg.questions.$inferSelect, QuestionRow>,
    SameRow<typeof pg.answerChecks.$inferSelect, AnswerCheckRow>,
    SameRow<typeof pg.artifacts.$inferSelect, ArtifactRow>,
    SameRow<typeof pg.processGroups.$inferSelect, ProcessGroupRow>,
    SameRow<typeof pg.loginCodes.$inferSelect, LoginCodeRow>,
    SameRow<typeof pg.oauthClients.$inferSelect, OAuthClientRow>,
    SameRow<typeof pg.oauthAuthorizationRequests.$inferSelect, OAuthAuthorizationRequestRow>,
    SameRow<typeof pg.oauthGrants.$inferSelect, OAuthGrantRow>,
    SameRow<typeof pg.oauthCodes.$inferSelect, OAuthCodeRow>,
    SameRow<typeof pg.oauthTokens.$inferSelect, OAuthTokenRow>,
    SameRow<typeof pg.webSessions.$inferSelect, WebSessionRow>,
    SameRow<typeof pg.nodes.$inferSelect, NodeRow>,
    SameRow<typeof pg.sendReceipts.$inferSelect, SendReceiptRow>,
    SameRow<typeof pgReleases.releases.$inferSelect, ReleaseRow>,
  ]
>;

/** The tables compared above, by their export name in both schemas. */
const TABLES = [
  'users',
  'apiTokens',
  'projects',
  'workflows',
  'messages',
  'questions',
  'answerChecks',
  'artifacts',
  'processGroups',
  'loginCodes',
  'oauthClients',
  'oauthAuthorizationRequests',
  'oauthGrants',
  'oauthCodes',
  'oauthTokens',
  'webSessions',
  'nodes',
  'sendReceipts',
] as const;

describe("the schemas' rows are the port's", () => {
  it('every compared table exists in both schemas; each row matches (npm run typecheck checks the types)', () => {
    expectTypeOf<SqliteRows[number]>().toEqualTypeOf<true>();
    expectTypeOf<PgRows[number]>().toEqualTypeOf<true>();
    for (const name of TABLES) {
      expect(sqlite[name], `sqlite ${name}`).toBeDefined();
      expect(pg[name], `pg ${name}`).toBeDefined();
    }
  });
});
