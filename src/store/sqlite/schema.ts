/**
 * The SQLite schema (drizzle). drizzle-kit generates the migrations in `drizzle/` from this file.
 *
 * Timestamps are ISO 8601 UTC strings with milliseconds (docs/contract.md#tools), which sort as text.
 * Ids are UUID v4 strings. All SQL lives in the repository modules beside this file.
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { WORKFLOW_KINDS } from '../../core/releases.js';
import { ACTIVE_STATUSES, WORKFLOW_STATUSES } from '../../core/workflow-states.js';

/** A person or agent account. `plan` names a plan of the operator's plan table (docs/contract.md#limits-and-plans). */
export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  plan: text('plan').notNull().default('free'),
  createdAt: text('created_at').notNull(),
});

/** API tokens, stored only as SHA-256 of the whole token (docs/contract.md#tokens-and-security). */
export const apiTokens = sqliteTable(
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
    readOnly: integer('read_only', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('api_tokens_user_idx').on(t.userId)],
);

/** Projects (docs/contract.md#tools). */
export const projects = sqliteTable(
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
    /**
     * Per-project counters, taken under the project's lock by the statement that uses them (a
     * store with several writers cannot rely on max()+1): the last conversation message's `seq`,
     * the last deploy number, and how many workflows of the project have completed (the
     * workspace's version).
     */
    messageSeq: integer('message_seq').notNull().default(0),
    deploymentSeq: integer('deployment_seq').notNull().default(0),
    workspaceVersion: integer('workspace_version').notNull().default(0),
  },
  (t) => [index('projects_owner_created_idx').on(t.ownerId, t.createdAt)],
);

/**
 * Workflows (docs/workflows.md). At most one active workflow per project is enforced by the
 * partial unique index `workflows_one_active_per_project`.
 */
export const workflows = sqliteTable(
  'workflows',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Monotonic order of creation across the whole store: FIFO order of the queue. */
    seq: integer('seq').notNull().unique(),
    kind: text('kind', { enum: WORKFLOW_KINDS }).notNull(),
    status: text('status', { enum: WORKFLOW_STATUSES }).notNull(),
    instruction: text('instruction').notNull(),
    stepIndex: integer('step_index').notNull().default(0),
    stepTotal: integer('step_total').notNull().default(0),
    stepName: text('step_name'),
    /** `<host>:<pid>:<nonce>` of the engine that holds this workflow's lease; null when none does. */
    runnerId: text('runner_id'),
    /**
     * End of the runner's lease, in ms since the Unix epoch; the runner's heartbeat moves it on.
     * Past it, any engine may take the workflow over (docs/workflows.md, "Leases").
     */
    leaseExpiresAt: integer('lease_expires_at'),
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
export const messages = sqliteTable(
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
export const questions = sqliteTable(
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
 * The pages of app files a question shows (docs/builders.md "Code questions"), stored when it is asked so
 * that every node serves `svc_get_session`'s `questionFilesPage` alike: JSON, an array of pages,
 * each an array of `{path, content, cut?}`.
 */
export const questionFilePages = sqliteTable('question_file_pages', {
  questionId: text('question_id')
    .primaryKey()
    .references(() => questions.id, { onDelete: 'cascade' }),
  pages: text('pages').notNull(),
});

/**
 * Answers sent through a node that cannot check them itself (docs/workflows.md "Where answers are
 * checked"): the node holding the workflow (or, when none does, the first free build worker) takes
 * the row, checks the answer on its workspace and writes the verdict; the sending node waits for
 * it and deletes the row.
 */
export const answerChecks = sqliteTable(
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
    /** The runner that took the check, null until one does. */
    checkedBy: text('checked_by'),
    /** JSON of the verdict (`{ok: true, content}` or `{ok: false, issues}`), null until checked. */
    verdict: text('verdict'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('answer_checks_workflow_idx').on(t.workflowId)],
);

/** Published previews and deployments. Files live under `<dataDir>/artifacts/<id>/`. */
export const artifacts = sqliteTable(
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
    bytes: integer('bytes').notNull().default(0),
    createdAt: text('created_at').notNull(),
    /**
     * The packed files when they are a blob of the store (PostgreSQL, docs/postgresql.md#artifacts);
     * always null here, where an artifact's files are a folder of the data dir. Kept so that both
     * stores have one row type.
     */
    blobId: text('blob_id'),
  },
  (t) => [
    index('artifacts_project_idx').on(t.projectId, t.kind, t.createdAt),
    index('artifacts_workflow_idx').on(t.workflowId),
    index('artifacts_project_number_idx').on(t.projectId, t.kind, t.number),
  ],
);

/**
 * The Expo "latest" update token of each project (docs/postgresql.md#update-channels): the secret
 * part of `/updates/latest/<token>`, created on first use, one per project, unique.
 */
export const updateChannels = sqliteTable('update_channels', {
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
export const processGroups = sqliteTable(
  'process_groups',
  {
    /** The runner identity's host: only an engine with the same host may signal the group. */
    host: text('host').notNull(),
    pgid: integer('pgid').notNull(),
    /**
     * Start time of the group's leader (`/proc/<pgid>/stat` field 22, with the boot id) when it was
     * recorded, or null where that cannot be read: a leader with another start time means the pgid
     * was reused by an unrelated process, which must never be signalled.
     */
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

/**
 * One-time login codes (docs/security.md "Sign in with OAuth"): a person proves who they are on the consent
 * page with one. Stored as SHA-256 only; single use.
 */
export const loginCodes = sqliteTable(
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

/**
 * OAuth clients (docs/contract.md, "Sign in with OAuth"): registered by RFC 7591 dynamic
 * registration (`kind = registered`, kept) or known by a Client ID Metadata Document whose URL is
 * the client id (`kind = metadata_document`, a cached copy refetched after `expiresAt`).
 */
export const oauthClients = sqliteTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  kind: text('kind', { enum: ['registered', 'metadata_document'] }).notNull(),
  /** The client's metadata as JSON (RFC 7591 fields, with the issued client id and secret). */
  metadata: text('metadata').notNull(),
  createdAt: text('created_at').notNull(),
  /** When a cached metadata document must be fetched again; null for registered clients. */
  expiresAt: text('expires_at'),
});

/**
 * Authorization requests waiting for the person's decision on the consent page. The CSRF token of
 * the page is stored as SHA-256; a request is decided once.
 */
export const oauthAuthorizationRequests = sqliteTable('oauth_authorization_requests', {
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

/**
 * What a person allowed: one client acting for one user at one resource. Every token issued for
 * an approval belongs to its grant; revoking the grant revokes them all.
 */
export const oauthGrants = sqliteTable(
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

/**
 * Authorization codes (SHA-256 only), bound to client, redirect URI, PKCE challenge, resource and
 * grant (hence user). Single use: `usedAt` is set on exchange.
 */
export const oauthCodes = sqliteTable(
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

/**
 * OAuth access (`svc_at_`) and refresh (`svc_rt_`) tokens, SHA-256 only. A refresh token is used
 * once (`usedAt`); presenting it again revokes its whole grant.
 */
export const oauthTokens = sqliteTable(
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

/**
 * Web console sessions (docs/console.md "Web console"): the `svc_session` cookie, stored as SHA-256 only.
 * A session signed in with an API token names it, and ends when that token is revoked or expires.
 */
export const webSessions = sqliteTable(
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
 * What `svc_send_message` answered to a send with a `requestId` (docs/contract.md#tools): a repeat
 * of the same id by the same user within 24 hours answers the same and records nothing new, on
 * any node. Older rows are ignored, and deleted by the user's next send with a `requestId`.
 */
export const sendReceipts = sqliteTable(
  'send_receipts',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    /** The answer, as the JSON of `svc_send_message`'s result. */
    result: text('result').notNull(),
    /** When the first send was recorded, in ms since the Unix epoch on the database's clock. */
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.requestId] })],
);

/**
 * The nodes serving this store now (docs/operators.md "One builder per deployment"): each node's
 * builder, so that a node with another builder says so at start and queued work no worker can
 * run shows in `/metrics` and the session. A node writes its row at start and again every
 * `NODE_REFRESH_MS`, and deletes it when it stops; a row older than three refreshes is a dead node's.
 */
export const nodes = sqliteTable('nodes', {
  /** The node's runner id (`<host>:<pid>:<nonce>`). */
  runnerId: text('runner_id').primaryKey(),
  role: text('role').notNull(),
  builder: text('builder').notNull(),
  /** Whether its engine claims workflows (workers and all-in-one servers; not `api` nodes). */
  claims: integer('claims', { mode: 'boolean' }).notNull(),
  /** When it last wrote its row, in ms since the Unix epoch on the database's clock. */
  seenAt: integer('seen_at').notNull(),
});

/**
 * Request-rate counters shared by every process that serves this data dir (docs/contract.md "Limits and
 * plans"). The layout is the one rate-limiter-flexible's `RateLimiterSQLite` reads and writes:
 * `key` = limiter prefix and counted key, `points` used in the window, `expire` = end of the
 * window in Unix milliseconds.
 */
export const rateLimits = sqliteTable('rate_limits', {
  key: text('key').primaryKey(),
  points: integer('points').notNull().default(0),
  expire: integer('expire'),
});

/**
 * Each project's environment variables (docs/security.md "Project environment"): plain values as
 * given, secrets sealed with the server's secrets key. Set by `env set` and the console, never
 * through a tool; read by the build that runs the project's workflow.
 */
export const projectEnv = sqliteTable(
  'project_env',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    value: text('value').notNull(),
    secret: integer('secret', { mode: 'boolean' }).notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name] })],
);
