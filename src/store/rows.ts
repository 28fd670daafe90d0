/**
 * The row types every store adapter reads and writes (docs/architecture.md "The store port"):
 * plain objects with the columns in camelCase, timestamps as ISO 8601 text, lease ends and the
 * times the database's clock writes as Unix ms. The port declares them; each adapter's drizzle
 * schema is checked against them at compile time (`RowsOfThisSchema` in `sqlite/schema.ts` and
 * `pg/schema.ts`), so a column that drifts fails `npm run typecheck`.
 */
import type { WorkflowKind } from '../core/releases.js';
import type { WorkflowStatus } from '../core/workflow-states.js';

/** A person or agent account. `plan` names a plan of the operator's plan table (docs/contract.md#limits-and-plans). */
export interface UserRow {
  id: string;
  name: string;
  plan: string;
  createdAt: string;
}

/** An API token, stored only as SHA-256 of the whole token (docs/contract.md#tokens-and-security). */
export interface ApiTokenRow {
  id: string;
  userId: string;
  tokenHash: string;
  /** The first characters of the token (`svc_abcd`), enough to recognise it in a listing. */
  displayPrefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** A read-only token lists and calls only the tools annotated `readOnlyHint`. */
  readOnly: boolean;
}

/** A project (docs/contract.md#tools), with its counters: last message `seq`, last deploy number, workspace version. */
export interface ProjectRow {
  id: string;
  ownerId: string;
  name: string;
  description: string | null;
  visibility: 'public' | 'private';
  createdAt: string;
  updatedAt: string;
  messageSeq: number;
  deploymentSeq: number;
  workspaceVersion: number;
}

/** A workflow (docs/workflows.md). */
export interface WorkflowRow {
  id: string;
  projectId: string;
  /** Order of creation across the whole store: FIFO order of the queue. */
  seq: number;
  kind: WorkflowKind;
  status: WorkflowStatus;
  instruction: string;
  stepIndex: number;
  stepTotal: number;
  stepName: string | null;
  /** `<host>:<pid>:<nonce>` of the engine that holds this workflow's lease; null when none does. */
  runnerId: string | null;
  /** End of the runner's lease, in ms since the Unix epoch (docs/workflows.md#leases). */
  leaseExpiresAt: number | null;
  /** The builder that runs it; may be left out of a new row (stored as null: any engine claims it). */
  builder?: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A message of a project's conversation. `seq` grows by one per project and never repeats. */
export interface MessageRow {
  id: string;
  projectId: string;
  seq: number;
  role: 'user' | 'agent' | 'system';
  type: 'instruction' | 'answer' | 'question' | 'progress' | 'result' | 'error' | 'status';
  content: string;
  workflowId: string | null;
  createdAt: string;
}

/** A question the building agent asked (docs/builders.md). */
export interface QuestionRow {
  id: string;
  workflowId: string;
  projectId: string;
  /** The builder's name for the question (`app_identifier`): a resumed builder finds its answer by it. */
  key: string;
  prompt: string;
  /** JSON array of allowed answers, or null. */
  options: string | null;
  /** A regular expression (source) the whole answer must match, or null. */
  pattern: string | null;
  /** `text`: a person's answer; `code`: files for the app as JSON (docs/builders.md "Code questions"). */
  kind: 'text' | 'code';
  /** JSON Schema (as JSON) of a code answer; null for text questions. */
  format: string | null;
  /** Longest answer in code points; null: the instruction limit. */
  maxLength: number | null;
  /** JSON of the checks a code answer must pass at answer time. */
  rules: string | null;
  askedAt: string;
  answer: string | null;
  answeredAt: string | null;
}

/** An answer waiting for the node that can check it (docs/workflows.md "Where answers are checked"). */
export interface AnswerCheckRow {
  id: string;
  questionId: string;
  workflowId: string;
  answer: string;
  /** The runner that took the check, null until one does. */
  checkedBy: string | null;
  /** JSON of the verdict, null until checked. */
  verdict: string | null;
  createdAt: string;
}

/** A published preview, deployment, or export (a checkpoint's source zip, docs/builders.md "Checkpoints"). */
export interface ArtifactRow {
  id: string;
  projectId: string;
  workflowId: string | null;
  kind: 'preview' | 'deployment' | 'export';
  platform: 'web' | 'ios' | 'android';
  /** Deploy number within the project, shared by the platforms of one deploy; null for previews. */
  number: number | null;
  /** An external URL reported by a builder; null when this service serves the files. */
  externalUrl: string | null;
  /** Bytes of the published files: what counts against the owner's quota. */
  bytes: number;
  createdAt: string;
  /** The packed files as a blob of the store (PostgreSQL, docs/postgresql.md#artifacts); null on SQLite. */
  blobId: string | null;
}

/**
 * One variable of a project's environment (docs/security.md "Project environment"): a plain value
 * as given, or a secret's value sealed with the server's secrets key (`services/secret-box.ts`).
 */
export interface ProjectEnvRow {
  projectId: string;
  /** The variable's name (`EXPO_PUBLIC_API_URL`, `SENTRY_AUTH_TOKEN`). */
  name: string;
  /** The plain value, or the sealed secret (`v1:<iv>:<tag>:<ciphertext>`, base64url). */
  value: string;
  secret: boolean;
  updatedAt: string;
}

/** A process group of a running build (docs/workflows.md, "Build processes"). */
export interface ProcessGroupRow {
  host: string;
  pgid: number;
  /** Start time of the group's leader with the boot id, or null where it cannot be read. */
  leaderStart: string | null;
  workflowId: string;
  projectId: string;
  runnerId: string;
  createdAt: string;
}

/** A one-time login code (docs/security.md "Sign in with OAuth"), SHA-256 only; single use. */
export interface LoginCodeRow {
  codeHash: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** An OAuth client: registered (RFC 7591) or known by a Client ID Metadata Document (a cached copy). */
export interface OAuthClientRow {
  clientId: string;
  kind: 'registered' | 'metadata_document';
  /** The client's metadata as JSON. */
  metadata: string;
  createdAt: string;
  /** When a cached metadata document must be fetched again; null for registered clients. */
  expiresAt: string | null;
}

/** An authorization request waiting for the person's decision on the consent page (CSRF token as SHA-256). */
export interface OAuthAuthorizationRequestRow {
  id: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string;
  resource: string;
  /** Requested scopes, space-separated ('' for none). */
  scope: string;
  csrfHash: string;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
}

/** What a person allowed: one client acting for one user at one resource. */
export interface OAuthGrantRow {
  id: string;
  userId: string;
  clientId: string;
  /** The client's name when the grant was made, for listings. */
  clientName: string;
  resource: string;
  scope: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** An authorization code (SHA-256 only), bound to client, redirect URI, PKCE challenge, resource and grant. */
export interface OAuthCodeRow {
  codeHash: string;
  grantId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** An OAuth access (`svc_at_`) or refresh (`svc_rt_`) token, SHA-256 only. */
export interface OAuthTokenRow {
  id: string;
  tokenHash: string;
  kind: 'access' | 'refresh';
  grantId: string;
  /** The audience (RFC 8707): the resource URL the token is good for. */
  resource: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  revokedAt: string | null;
}

/** A web console session (docs/console.md): the `svc_session` cookie, SHA-256 only. */
export interface WebSessionRow {
  id: string;
  sessionHash: string;
  userId: string;
  /** The API token the user signed in with; null for a one-time login code. */
  tokenId: string | null;
  createdAt: string;
  expiresAt: string;
}

/** A node serving this store now (docs/operators.md "One builder per deployment"). */
export interface NodeRow {
  /** The node's runner id (`<host>:<pid>:<nonce>`). */
  runnerId: string;
  role: string;
  builder: string;
  /** Whether its engine claims workflows. */
  claims: boolean;
  /** When it last wrote its row, in ms since the Unix epoch on the database's clock. */
  seenAt: number;
}

/** What `svc_send_message` answered to a send with a `requestId` (docs/contract.md#tools). */
export interface SendReceiptRow {
  userId: string;
  requestId: string;
  /** The answer, as the JSON of `svc_send_message`'s result. */
  result: string;
  /** When the first send was recorded, in ms since the Unix epoch on the database's clock. */
  createdAt: number;
}

/**
 * The release of a deploy or rollback workflow (docs/releases.md): its channel and rollout, set
 * when it is sent; the rest set when it publishes its first deployment.
 */
export interface ReleaseRow {
  workflowId: string;
  projectId: string;
  channel: string;
  /** 1..100: the share of the channel's phones (by `eas-client-id` bucket) that get it. */
  rolloutPercent: number;
  /** The deploy number a rollback publishes again; null for a deploy. */
  rollbackOf: number | null;
  /** The deploy number; null until the workflow publishes its first deployment. */
  number: number | null;
  /** The channel's deploy before this one, which `changes` counts from; null for the first. */
  previousNumber: number | null;
  /** JSON array of the platforms published (`["web","ios","android"]`). */
  platforms: string;
  /** JSON array of the Expo SDKs its updates serve (`[58, 54]`; `[]` without updates). */
  sdks: string;
  /** JSON of the files changed since `previousNumber` (`[{path, added, removed}]`), or null. */
  changes: string | null;
  /** The app's source files when it was published, gzipped JSON (`{path: text}`), or null. */
  source: Buffer | null;
  createdAt: string;
}

/** A published release without its source snapshot (what lists read). */
export type PublishedRelease = Omit<ReleaseRow, 'source'> & { number: number };
