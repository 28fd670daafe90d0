/**
 * The PostgreSQL schema (drizzle `pg-core`), table by table the SQLite schema (docs/postgresql.md#schema): timestamps stay ISO
 * 8601 UTC text (they sort as text), ids stay UUID text, integers stay JavaScript numbers (`bigint` columns in
 * `number` mode where a value may pass 2^31: ms since the epoch, bytes). drizzle-kit generates the
 * migrations in `drizzle-pg/` from this file (`npm run db:generate`). Differences, all deliberate:
 * - `workflows.seq` is an identity column (PostgreSQL assigns the FIFO order; SQLite: max + 1, one writer);
 * - `projects` carries the per-project counters (`message_seq`, `deployment_seq`, `workspace_version`,
 *   `last_runner_host`) and `update_channels` holds the Expo "latest" update tokens, which several nodes share;
 * - PostgreSQL only: `blobs` and `blob_chunks` (artifact and workspace bytes, chunked `bytea`),
 *   `workspace_snapshots` (a project's last completed workspace) and `artifacts.blob_id`;
 * - `rate_limits` has the layout rate-limiter-flexible's `RateLimiterPostgres` reads and writes, and is
 *   UNLOGGED (migration `0001`, with the function `svc_now_ms()`, the database's clock).
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  varchar,
} from 'drizzle-orm/pg-core';
import { WORKFLOW_KINDS } from '../../core/releases.js';
import { ACTIVE_STATUSES, WORKFLOW_STATUSES } from '../../core/workflow-states.js';

/** `bytea` as a Node `Buffer` (node-postgres reads and writes `bytea` as `Buffer`). */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/** A person or agent account. `plan` names a plan of the operator's plan table (docs/contract.md#limits-and-plans). */
export const users = pgTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  plan: text('plan').notNull().default('free'),
  createdAt: text('created_at').notNull(),
});

/** API tokens, stored only as SHA-256 of the whole token (docs/contract.md#tokens-and-security). */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    /** The first characters of the token (`svc_abcd`), enough to recognise it in a listing. */
    displayPrefix: text('display_prefix').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at'),
    revokedAt: text('revoked_at'),
    /** A read-only token lists and calls only the tools annotated `readOnlyHint` (`token create --read-only`). */
    readOnly: boolean('read_only').notNull().default(false),
  },
  (t) => [index('api_tokens_user_idx').on(t.userId)],
);

/**
 * Projects (docs/contract.md#tools), with the per-project counters that every node increments under
 * the project's row lock: message numbers, deploy numbers and the workspace snapshot's version.
 */
export const projects = pgTable(
  'projects',
  {
    id: text('id').primaryKey(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    visibility: text('visibility', { enum: ['public', 'private'] }).notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    /** The `seq` of the project's last message (0: none yet); the next message takes this + 1. */
    messageSeq: integer('message_seq').notNull().default(0),
    /** The project's last deploy number (0: none yet). */
    deploymentSeq: integer('deployment_seq').notNull().default(0),
    /** Version of the project's last workspace snapshot (0: none); a worker with an older copy restores it. */
    workspaceVersion: integer('workspace_version').notNull().default(0),
    /** Host of the runner that completed the project's last workflow, or null. */
    lastRunnerHost: text('last_runner_host'),
  },
  (t) => [index('projects_owner_created_idx').on(t.ownerId, t.createdAt)],
);

/**
 * Workflows (docs/workflows.md). At most one active workflow per project is enforced by the
 * partial unique index `workflows_one_active_per_project`.
 */
export const workflows = pgTable(
  'workflows',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Monotonic order of creation across the whole store: FIFO order of the queue (an identity column). */
    seq: bigint('seq', { mode: 'number' }).notNull().unique().generatedByDefaultAsIdentity(),
    kind: text('kind', { enum: WORKFLOW_KINDS }).notNull(),
    status: text('status', { enum: WORKFLOW_STATUSES }).notNull(),
    instruction: text('instruction').notNull(),
    stepIndex: integer('step_index').notNull().default(0),
    stepTotal: integer('step_total').notNull().default(0),
    stepName: text('step_name'),
    /** `<host>:<pid>:<nonce>` of the engine that holds this workflow's lease; null when none does. */
    runnerId: text('runner_id'),
    /** End of the runner's lease, in ms since the Unix epoch on the database's clock (`svc_now_ms()`). */
    leaseExpiresAt: bigint('lease_expires_at', { mode: 'number' }),
    /**
     * The builder that runs it (`expo`, `command`, `scripted`): the sending node's. Only an engine
     * with this builder claims it; null for a workflow stored before builders were recorded (any
     * engine may claim it).
     */
    builder: text('builder'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    createdAt: text('created_at').notNull(),
    startedAt: text('started_at'),
    finishedAt: text('finished_at'),
  },
  (t) => [
    uniqueIndex('workflows_one_active_per_project')
      .on(t.projectId)
      .where(sql.raw(`status in (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(', ')})`)),
    index('workflows_project_status_idx').on(t.projectId, t.status, t.seq),
    index('workflows_status_seq_idx').on(t.status, t.seq),
  ],
);

/** The conversation of a project. `seq` grows by one per project and never repeats. */
export const messages = pgTable(
  'messages',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { enum: ['user', 'agent', 'system'] }).notNull(),
    type: text('type', {
      enum: ['instruction', 'answer', 'question', 'progress', 'result', 'error', 'status'],
    }).notNull(),
    content: text('content').notNull(),
    workflowId: text('workflow_id').references(() => workflows.id, { onDelete: 'set null' }),
    createdAt: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('messages_project_seq_idx').on(t.projectId, t.seq)],
);

/** Questions the building agent asked (docs/builders.md#builders): stored so they survive a restart. */
export const questions = pgTable(
  'questions',
  {
    id: text('id').primaryKey(),
    workflowId: text('workflow_id')
      .notNull()
      .references(() => workflows.id, { onDelete: 'cascade' }),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The builder's name for the question (`app_identifier`): a resumed builder finds its answer by it. */
    key: text('key').notNull(),
    prompt: text('prompt').notNull(),
    /** JSON array of allowed answers, or null. */
    options: text('options'),
    /** A regular expression (source) the whole answer must match, or null. */
    pattern: text('pattern'),
    /** `text`: a person's answer; `code`: files for the app as JSON (docs/builders.md "Code questions"). */
    kind: text('kind', { enum: ['text', 'code'] })
      .notNull()
      .default('text'),
    /** JSON Schema (as JSON) of a code answer, shown to the client; null for text questions. */
    format: text('format'),
    /** Longest answer in code points; null: the instruction limit. */
    maxLength: integer('max_length'),
    /** JSON of the checks a code answer must pass at answer time (never shown to clients). */
    rules: text('rules'),
    askedAt: text('asked_at').notNull(),
    answer: text('answer'),
    answeredAt: text('answered_at'),
  },
  (t) => [index('questions_workflow_idx').on(t.workflowId), index('questions_project_key_idx').on(t.projectId, t.key)],
);

/**
 * Bytes stored in the database (artifacts, workspace snapshots): one row per blob, its content in
 * `blob_chunks`. A blob no row names an hour after `created_at` was left by a crash and is swept.
 */
export const blobs = pgTable('blobs', {
  id: text('id').primaryKey(),
  /** Length of the content in bytes. */
  bytes: bigint('bytes', { mode: 'number' }).notNull(),
  /** SHA-256 of the content, lowercase hex. */
  sha256: text('sha256').notNull(),
  createdAt: text('created_at').notNull(),
});

/** A blob's content in order: chunk `n` (0, 1, ...) of at most 1 MiB. */
export const blobChunks = pgTable(
  'blob_chunks',
  {
    blobId: text('blob_id')
      .notNull()
      .references(() => blobs.id, { onDelete: 'cascade' }),
    n: integer('n').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.blobId, t.n] })],
);

/** The pages of app files a question shows, stored when it is asked (as in SQLite). */
export const questionFilePages = pgTable('question_file_pages', {
  questionId: text('question_id')
    .primaryKey()
    .references(() => questions.id, { onDelete: 'cascade' }),
  pages: text('pages').notNull(),
});

/** Answers checked by the node that holds their workflow (as in SQLite; docs/workflows.md "Where answers are checked"). */
export const answerChecks = pgTable(
  'answer_checks',
  {
    id: text('id').primaryKey(),
    questionId: text('question_id')
      .notNull()
      .references(() => questions.id, { onDelete: 'cascade' }),
    workflowId: text('workflow_id')
      .notNull()
      .references(() => workflows.id, { onDelete: 'cascade' }),
    answer: text('answer').notNull(),
    checkedBy: text('checked_by'),
    verdict: text('verdict'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('answer_checks_workflow_idx').on(t.workflowId)],
);

/** Published previews and deployments; their files are one blob (`blob_id`) on PostgreSQL. */
export const artifacts = pgTable(
  'artifacts',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    workflowId: text('workflow_id').references(() => workflows.id, { onDelete: 'set null' }),
    kind: text('kind', { enum: ['preview', 'deployment', 'export'] }).notNull(),
    platform: text('platform', { enum: ['web', 'ios', 'android'] }).notNull(),
    /**
     * Deploy number within the project (1, 2, ...), shared by every platform one deploy workflow
     * published (`deploy #3: web, ios, android`); null for previews.
     */
    number: integer('number'),
    /** An external URL reported by a builder; null when the files are served by this service. */
    externalUrl: text('external_url'),
    /** Bytes of the published files (0 for an external URL): what counts against the owner's quota. */
    bytes: bigint('bytes', { mode: 'number' }).notNull().default(0),
    createdAt: text('created_at').notNull(),
    /** The packed files (PostgreSQL only); null for an external URL. */
    blobId: text('blob_id').references(() => blobs.id, { onDelete: 'restrict' }),
  },
  (t) => [
    index('artifacts_project_idx').on(t.projectId, t.kind, t.createdAt),
    index('artifacts_workflow_idx').on(t.workflowId),
    index('artifacts_project_number_idx').on(t.projectId, t.kind, t.number),
  ],
);

/**
 * The last completed workspace of each project (PostgreSQL only): a worker whose local copy is
 * older than `version` restores it before building (docs/postgresql.md#schema).
 */
export const workspaceSnapshots = pgTable('workspace_snapshots', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  /** Equals `projects.workspace_version` when written. */
  version: integer('version').notNull(),
  blobId: text('blob_id')
    .notNull()
    .references(() => blobs.id, { onDelete: 'restrict' }),
  /** Size of the packed snapshot in bytes. */
  bytes: bigint('bytes', { mode: 'number' }).notNull(),
  createdAt: text('created_at').notNull(),
});

/** The Expo "latest" update token of each project: a worker creates it, any API node resolves it. */
export const updateChannels = pgTable('update_channels', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  token: text('token').notNull().unique(),
  createdAt: text('created_at').notNull(),
});

/**
 * Process groups of running builds (docs/workflows.md, "Build processes"): recorded while a
 * build runs so that whoever takes over or restarts on the same host can kill them.
 */
export const processGroups = pgTable(
  'process_groups',
  {
    /** The runner identity's host: only an engine with the same host may signal the group. */
    host: text('host').notNull(),
    pgid: integer('pgid').notNull(),
    /** Start time of the group's leader with the boot id, or null where it cannot be read. */
    leaderStart: text('leader_start'),
    workflowId: text('workflow_id')
      .notNull()
      .references(() => workflows.id, { onDelete: 'cascade' }),
    projectId: text('project_id').notNull(),
    runnerId: text('runner_id').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.host, t.pgid] }), index('process_groups_project_idx').on(t.projectId)],
);

/** One-time login codes (docs/security.md "Sign in with OAuth"), SHA-256 only; single use. */
export const loginCodes = pgTable(
  'login_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [index('login_codes_user_idx').on(t.userId)],
);

/** OAuth clients: registered (RFC 7591) or known by a Client ID Metadata Document (a cached copy). */
export const oauthClients = pgTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  kind: text('kind', { enum: ['registered', 'metadata_document'] }).notNull(),
  /** The client's metadata as JSON (RFC 7591 fields, with the issued client id and secret). */
  metadata: text('metadata').notNull(),
  createdAt: text('created_at').notNull(),
  /** When a cached metadata document must be fetched again; null for registered clients. */
  expiresAt: text('expires_at'),
});

/** Authorization requests waiting for the person's decision on the consent page (CSRF token as SHA-256). */
export const oauthAuthorizationRequests = pgTable('oauth_authorization_requests', {
  id: text('id').primaryKey(),
  clientId: text('client_id').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  state: text('state').notNull(),
  resource: text('resource').notNull(),
  /** Requested scopes, space-separated ('' for none). */
  scope: text('scope').notNull().default(''),
  csrfHash: text('csrf_hash').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  decidedAt: text('decided_at'),
});

/** What a person allowed: one client acting for one user at one resource. */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    /** The client's name when the grant was made, for listings. */
    clientName: text('client_name').notNull(),
    resource: text('resource').notNull(),
    scope: text('scope').notNull().default(''),
    createdAt: text('created_at').notNull(),
    lastUsedAt: text('last_used_at'),
    revokedAt: text('revoked_at'),
  },
  (t) => [index('oauth_grants_user_idx').on(t.userId)],
);

/** Authorization codes (SHA-256 only), bound to client, redirect URI, PKCE challenge, resource and grant. */
export const oauthCodes = pgTable(
  'oauth_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    resource: text('resource').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [index('oauth_codes_grant_idx').on(t.grantId)],
);

/** OAuth access (`svc_at_`) and refresh (`svc_rt_`) tokens, SHA-256 only. */
export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    /** The audience (RFC 8707): the resource URL the token is good for. */
    resource: text('resource').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    revokedAt: text('revoked_at'),
  },
  (t) => [index('oauth_tokens_grant_idx').on(t.grantId)],
);

/** Web console sessions (docs/console.md "Web console"): the `svc_session` cookie, SHA-256 only. */
export const webSessions = pgTable(
  'web_sessions',
  {
    id: text('id').primaryKey(),
    sessionHash: text('session_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The API token the user signed in with; null for a one-time login code. */
    tokenId: text('token_id').references(() => apiTokens.id, { onDelete: 'cascade' }),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [index('web_sessions_user_idx').on(t.userId), index('web_sessions_expires_idx').on(t.expiresAt)],
);

/**
 * Request-rate counters shared by every node (docs/contract.md#limits-and-plans), in the layout of
 * rate-limiter-flexible's `RateLimiterPostgres`: `key` = limiter prefix and counted key, `points`
 * used in the window, `expire` = end of the window in Unix milliseconds. UNLOGGED (migration 0001):
 * counters of the current minute need no crash safety.
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});

/**
 * The nodes serving this store now (docs/operators.md "One builder per deployment"): each node's
 * builder, so that a node with another builder says so at start and queued work no worker can
 * run shows in `/metrics` and the session. A node writes its row at start and again every
 * `NODE_REFRESH_MS`, and deletes it when it stops; a row older than three refreshes is a dead node's.
 */
export const nodes = pgTable('nodes', {
  /** The node's runner id (`<host>:<pid>:<nonce>`). */
  runnerId: text('runner_id').primaryKey(),
  role: text('role').notNull(),
  builder: text('builder').notNull(),
  /** Whether its engine claims workflows (workers and all-in-one servers; not `api` nodes). */
  claims: boolean('claims').notNull(),
  /** When it last wrote its row, in ms since the Unix epoch on the database's clock. */
  seenAt: bigint('seen_at', { mode: 'number' }).notNull(),
});

/**
 * What `svc_send_message` answered to a send with a `requestId` (docs/contract.md#tools): a repeat
 * of the same id by the same user within 24 hours answers the same and records nothing new, on
 * any node. Older rows are ignored, and deleted by the user's next send with a `requestId`.
 */
export const sendReceipts = pgTable(
  'send_receipts',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    /** The answer, as the JSON of `svc_send_message`'s result. */
    result: text('result').notNull(),
    /** When the first send was recorded, in ms since the Unix epoch on the database's clock. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.requestId] })],
);

export const projectEnv = pgTable(
  'project_env',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    value: text('value').notNull(),
    secret: boolean('secret').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name] })],
);
