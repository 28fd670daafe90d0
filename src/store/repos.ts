/**
 * The repositories of the store port (docs/architecture.md "The store port"): today's methods of
 * each table's repository, every one returning a Promise. `store.repos` runs each call as its own
 * auto-commit statement; `tx.<repo>` runs it inside the transaction. Rows are `rows.ts`'s types.
 * None of these throws for a missing row (`undefined`, `false` or `null` say so); they reject with
 * the driver's error when the database fails.
 */
import type {
  AnswerCheckRow,
  ApiTokenRow,
  ArtifactRow,
  LoginCodeRow,
  NodeRow,
  MessageRow,
  OAuthAuthorizationRequestRow,
  OAuthClientRow,
  OAuthCodeRow,
  OAuthGrantRow,
  OAuthTokenRow,
  ProcessGroupRow,
  ProjectEnvRow,
  ProjectRow,
  QuestionRow,
  SendReceiptRow,
  UserRow,
  WebSessionRow,
  WorkflowRow,
} from './rows.js';
import type { ReleaseRepo } from './release-repo.js';
import type { WorkflowStatus } from '../core/workflow-states.js';

/** Reads and writes users. */
export interface UserRepo {
  findByName(name: string): Promise<UserRow | undefined>;
  findById(id: string): Promise<UserRow | undefined>;
  insert(row: UserRow): Promise<void>;
  setPlan(id: string, plan: string): Promise<void>;
  list(): Promise<UserRow[]>;
}

/** A token row joined with its user, as the authentication check needs it. */
export interface TokenWithUser {
  token: ApiTokenRow;
  user: UserRow;
}
/** Reads and writes API tokens (hashes only). */
export interface TokenRepo {
  /** Prepared once: the hot path of every authenticated request. */
  findByHash(hash: string): Promise<TokenWithUser | undefined>;
  insert(row: ApiTokenRow): Promise<void>;
  findById(id: string): Promise<ApiTokenRow | undefined>;
  revoke(id: string, at: string): Promise<void>;
  list(userId?: string): Promise<TokenWithUser[]>;
}

/** Reads and writes projects; the only writer of the `projects` table. */
export interface ProjectRepo {
  /**
   * The row, possibly from a read cache (shared with it: callers must not mutate it). The cache is
   * exact for the name, visibility and owner; the counters (`messageSeq`, `deploymentSeq`,
   * `workspaceVersion`) move with messages and deployments and may be older there: they are taken
   * by the statements that use them, never read from this.
   */
  findById(id: string): Promise<ProjectRow | undefined>;
  /** The owner's projects, newest first (docs/contract.md#tools). */
  listByOwner(ownerId: string): Promise<ProjectRow[]>;
  countByOwner(ownerId: string): Promise<number>;
  /** Projects the owner created strictly after `since` (ISO timestamp), and the oldest of them. */
  createdSince(
    ownerId: string,
    since: string,
  ): Promise<{
    n: number;
    oldest: string | null;
  }>;
  insert(row: ProjectRow): Promise<void>;
  touch(id: string, at: string): Promise<void>;
  /**
   * Moves `updatedAt` to `at` and the project's `workspaceVersion` to the next number (a workflow
   * completed). Call inside the transaction that records the completion.
   * @returns the new version.
   */
  completeWorkspace(id: string, at: string): Promise<number>;
}

/** A workflow that could take a build slot, with its owner and the owner's plan name. */
export type SlotCandidate = WorkflowRow & {
  ownerId: string;
  plan: string;
};
/** The earliest end of one runner's live leases (`WorkflowRepo.liveLeaseEnds`). */
export interface LeaseEnd {
  /** The runner (`<host>:<pid>:<nonce>`). */
  runnerId: string;
  /** ms since the Unix epoch, on the database's clock. */
  leaseEnd: number;
}

/** Reads workflows and changes them by compare-and-set on the status. */
export interface WorkflowRepo {
  nextSeq(): Promise<number>;
  insert(row: WorkflowRow): Promise<void>;
  findById(id: string): Promise<WorkflowRow | undefined>;
  findActive(projectId: string): Promise<WorkflowRow | undefined>;
  /** Whether the project has an active workflow: `findActive` without its row (one index read). */
  hasActive(projectId: string): Promise<boolean>;
  /** The project's queued workflows in FIFO order. */
  listQueued(projectId: string): Promise<WorkflowRow[]>;
  latestFinished(projectId: string): Promise<WorkflowRow | undefined>;
  /** Instructions of the project's earlier workflows, oldest first (the builder's memory). */
  instructionsBefore(projectId: string, seq: number): Promise<string[]>;
  /**
   * The queued and active workflows of every project owned by `ownerId`, in one read (the web
   * console's projects list): active first within a project is not implied, order is by `seq`.
   */
  listUnfinishedByOwner(
    ownerId: string,
  ): Promise<Pick<WorkflowRow, 'projectId' | 'kind' | 'status' | 'stepIndex' | 'stepTotal' | 'stepName'>[]>;
  /**
   * The reaper's first read (docs/workflows.md "Leases"): for each runner other than `runnerId`
   * that holds a live lease (one ending after `now`, ms on the database's clock) on an active
   * workflow not in `held` (the workflows this process holds), the earliest end of those leases.
   * One row per such runner, in no order.
   */
  liveLeaseEnds(runnerId: string, now: number, held: readonly string[]): Promise<LeaseEnd[]>;
  /**
   * The reaper's second read (docs/workflows.md "Leases"): the active workflows not in `held` that
   * no live runner holds, oldest first (`seq`): no runner or no lease, a lease that ended at or
   * before `now` (ms on the database's clock), runner `runnerId` (this engine: it holds only what
   * it has in memory), or a runner in `dead` (other processes of this host known gone).
   */
  takeoverCandidates(
    runnerId: string,
    now: number,
    held: readonly string[],
    dead?: readonly string[],
  ): Promise<WorkflowRow[]>;
  /**
   * Every workflow that could take a build slot now, oldest first, each with its owner and the
   * owner's plan (the engine's scheduler picks among them, docs/workflows.md "Fair shares"):
   * - the oldest queued workflow of each project that has no active workflow (per-project FIFO);
   * - each workflow waiting for input whose questions are all answered and that no runner holds,
   *   or that `runnerId` holds (its builder waits in that runner's memory).
   * A project has at most one of these (its active workflow, or the head of its queue). Only
   * workflows recorded with `builder` (or with no builder) are candidates.
   */
  slotCandidates(runnerId: string, builder: string): Promise<SlotCandidate[]>;
  /** Workflows holding a build slot (`running`, `cancelling`) per owner, server-wide. */
  runningByOwner(): Promise<Map<string, number>>;
  /**
   * Workflows of `ownerId` holding a build slot (`running`, `cancelling`), server-wide. The claim
   * reads it under the owner's lock (`tx.tryLock('users', ownerId)`), so it is exact there.
   */
  countRunningOf(ownerId: string): Promise<number>;
  /** Queued workflows store-wide per recorded builder (`null`: recorded before builders were). */
  countQueuedByBuilder(): Promise<Map<string | null, number>>;
  /** Queued (not yet started) workflows over all projects of `ownerId`. */
  countQueuedByOwner(ownerId: string): Promise<number>;
  /** Workflows in each status, store-wide, in one read (the metrics' gauges); a status with none is 0. */
  countByStatus(): Promise<Record<WorkflowStatus, number>>;
  /**
   * Moves workflow `id` to a new status (and other fields) only if its status is `from` and, when
   * `owner` is given, its runner is `owner` (`null`: no runner).
   * @returns true when the row changed.
   */
  transition(
    id: string,
    from: WorkflowStatus,
    patch: Partial<WorkflowRow> & {
      status: WorkflowStatus;
    },
    owner?: string | null,
  ): Promise<boolean>;
  /**
   * The claim's compare-and-set: moves queued workflow `id` to `patch` (status `running`) only if it
   * is still queued, is the oldest queued workflow of its project, and the project has no active
   * workflow. Never trips the one-active index.
   * @returns true when this call claimed it.
   */
  claimQueued(
    id: string,
    patch: Partial<WorkflowRow> & {
      status: WorkflowStatus;
    },
  ): Promise<boolean>;
  /**
   * The heartbeat's compare-and-set: moves the lease of active workflow `id` to `leaseExpiresAt`
   * only while `runnerId` holds it.
   * @returns false when the runner has lost the workflow (taken over, finished, or gone).
   */
  renewLease(id: string, runnerId: string, leaseExpiresAt: number): Promise<boolean>;
  /** True while `runnerId` holds active workflow `id` (call inside the write that depends on it). */
  isHeldBy(id: string, runnerId: string): Promise<boolean>;
  /**
   * Gives up the lease of a workflow waiting for input (its question stays stored), only if
   * `owner` (`null`: nobody) still holds it.
   */
  releaseWaiting(id: string, owner: string | null): Promise<boolean>;
  /** Updates fields that are not the status (the step) of an active workflow, only while `runnerId` holds it. */
  updateHeld(id: string, runnerId: string, patch: Partial<Omit<WorkflowRow, 'status'>>): Promise<boolean>;
}

/** Appends and pages conversation messages. */
export interface MessageRepo {
  /** Appends a message with the project's next `seq`. Call inside a write transaction. */
  append(row: Omit<MessageRow, 'seq'>): Promise<MessageRow>;
  /** The project's newest `seq`, 0 for an empty conversation (one index read). */
  lastSeq(projectId: string): Promise<number>;
  /** Up to `limit` messages with `seq > after`, oldest first. */
  list(projectId: string, after: number, limit: number): Promise<MessageRow[]>;
}

/** Reads and writes the agent's questions and their answers. */
export interface QuestionRepo {
  insert(row: QuestionRow): Promise<void>;
  findById(id: string): Promise<QuestionRow | undefined>;
  /** The unanswered question of a workflow, if any. */
  pendingOf(workflowId: string): Promise<QuestionRow | undefined>;
  /** The question a workflow asked under `key`, answered or not. */
  findByKey(workflowId: string, key: string): Promise<QuestionRow | undefined>;
  /** The latest answer the project gave to a question with `key`, in any workflow. */
  latestAnswer(projectId: string, key: string): Promise<string | undefined>;
  /** Records the answer if the question is still unanswered. @returns true when it was. */
  answer(id: string, answer: string, at: string): Promise<boolean>;
  /** Stores the pages of files question `questionId` shows (JSON, see `question_file_pages`), replacing any. */
  saveFilePages(questionId: string, pages: string): Promise<void>;
  /** The pages of files the question shows (JSON), or undefined when none were stored. */
  filePagesOf(questionId: string): Promise<string | undefined>;
}

/**
 * Answers checked on another node (docs/workflows.md "Where answers are checked"): the sending node
 * inserts a row, a checking node takes it and writes the verdict, the sending node reads it and
 * deletes the row.
 */
export interface AnswerCheckRepo {
  insert(row: AnswerCheckRow): Promise<void>;
  findById(id: string): Promise<AnswerCheckRow | undefined>;
  /** Checks nobody took yet, oldest first: of workflow `workflowId`, or of every workflow. */
  listOpen(workflowId?: string): Promise<AnswerCheckRow[]>;
  /** Takes an open check for runner `runnerId`. @returns true when this call took it (nobody had). */
  take(id: string, runnerId: string): Promise<boolean>;
  /** Writes the verdict (JSON) of a check `runnerId` took and nobody settled. @returns true when written. */
  settle(id: string, runnerId: string, verdict: string): Promise<boolean>;
  /** Deletes one check (its sender is done with it). */
  delete(id: string): Promise<void>;
  /** Deletes the checks created before `before` (ISO 8601): their senders stopped waiting long ago. @returns how many. */
  deleteBefore(before: string): Promise<number>;
}

/** Reads and writes artifact rows (the files are the `ArtifactStore`'s). */
export interface ArtifactRepo {
  insert(row: ArtifactRow): Promise<void>;
  findById(id: string): Promise<ArtifactRow | undefined>;
  /** The workflow's artifacts, oldest first, at most `limit` of them. */
  listByWorkflow(workflowId: string, limit?: number): Promise<ArtifactRow[]>;
  /** The newest artifact of each (kind, platform) of the project: at most six rows, one indexed read each. */
  latestPerPlatform(projectId: string): Promise<ArtifactRow[]>;
  /** Bytes of published files held by the projects of user `ownerId`. */
  bytesUsedByOwner(ownerId: string): Promise<number>;
  /** The project's newest `limit` artifacts of `kind`, newest first (checkpoints: its exports). */
  listByKind(projectId: string, kind: ArtifactRow['kind'], limit: number): Promise<ArtifactRow[]>;
  /** The project's previews of `platform` beyond the newest `keep`, oldest first (for retention). */
  previewsBeyond(projectId: string, platform: ArtifactRow['platform'], keep: number): Promise<ArtifactRow[]>;
  /** Deletes artifact rows by id. */
  delete(ids: string[]): Promise<void>;
  latest(
    projectId: string,
    kind: ArtifactRow['kind'],
    platform: ArtifactRow['platform'],
  ): Promise<ArtifactRow | undefined>;
  /**
   * The deploy number of a new deployment of workflow `workflowId`: the number its other
   * deployments already have (one number per deploy, shared by its platforms), else the project's
   * highest deploy number plus one. Call it in the transaction that inserts the row.
   */
  deployNumber(projectId: string, workflowId: string): Promise<number>;
}

/** Records, lists and forgets build process groups. */
export interface ProcessGroupRepo {
  /** Records a group (replacing a stale row of the same host and pgid: pgids are reused). */
  insert(row: ProcessGroupRow): Promise<void>;
  /** Forgets one group. */
  remove(host: string, pgid: number): Promise<void>;
  /** Groups recorded for a project. */
  listByProject(projectId: string): Promise<ProcessGroupRow[]>;
  /** Groups recorded on `host`. */
  listByHost(host: string): Promise<ProcessGroupRow[]>;
}

/** A token row with its grant and the grant's user, as a token check needs them. */
export interface OAuthTokenWithGrant {
  token: OAuthTokenRow;
  grant: OAuthGrantRow;
  user: UserRow;
}
/** A grant with its user, for listings. */
export interface OAuthGrantWithUser {
  grant: OAuthGrantRow;
  user: UserRow;
}
/** Reads and writes the OAuth tables. */
export interface OAuthRepo {
  /** Prepared once: the hot path of every request with an OAuth access token. */
  findClient(clientId: string): Promise<OAuthClientRow | undefined>;
  /** Inserts or replaces the client with the row's id (a refreshed metadata document replaces its copy). */
  saveClient(row: OAuthClientRow): Promise<void>;
  insertRequest(row: OAuthAuthorizationRequestRow): Promise<void>;
  findRequest(id: string): Promise<OAuthAuthorizationRequestRow | undefined>;
  setRequestCsrf(id: string, csrfHash: string): Promise<void>;
  /** Marks the request decided; false when it already was (a second submission of the page). */
  decideRequest(id: string, at: string): Promise<boolean>;
  /** Deletes requests that expired before `now` (they can never be decided). */
  deleteExpiredRequests(now: string): Promise<void>;
  insertGrant(row: OAuthGrantRow): Promise<void>;
  findGrant(id: string): Promise<OAuthGrantRow | undefined>;
  listGrants(userId?: string): Promise<OAuthGrantWithUser[]>;
  /** Revokes the grant and every token of it. */
  revokeGrant(id: string, at: string): Promise<void>;
  touchGrant(id: string, at: string): Promise<void>;
  insertCode(row: OAuthCodeRow): Promise<void>;
  findCode(hash: string): Promise<OAuthCodeRow | undefined>;
  /** Marks the code used; false when it already was (a replay). */
  useCode(hash: string, at: string): Promise<boolean>;
  /**
   * Deletes codes that expired before `codesBefore` and tokens that expired before `tokensBefore`
   * (an expired token is refused whatever its row says), then the grants left with neither: an
   * approval whose code was never exchanged, or a grant whose every token has expired. Grants with
   * a live token stay, revoked or not, for `token list`.
   */
  deleteExpired(codesBefore: string, tokensBefore: string): Promise<void>;
  /** True while the grant's authorization code waits to be exchanged (unused and not expired at `now`). */
  hasOpenCode(grantId: string, now: string): Promise<boolean>;
  insertToken(row: OAuthTokenRow): Promise<void>;
  findToken(hash: string): Promise<OAuthTokenWithGrant | undefined>;
  /** Marks a refresh token used; false when it already was (a replay). */
  useToken(id: string, at: string): Promise<boolean>;
  /** Expiry of the grant's newest refresh token (ISO), or null when it has none. */
  lastRefreshExpiry(grantId: string): Promise<string | null>;
  revokeToken(id: string, at: string): Promise<void>;
}

/** Reads and writes login codes (hashes only). */
export interface LoginCodeRepo {
  insert(row: LoginCodeRow): Promise<void>;
  /**
   * Marks the unused, unexpired code with `hash` used at `now` and returns its user; undefined
   * when there is no such code. One statement, so that a code is redeemed at most once even by
   * two processes at the same time.
   */
  consume(hash: string, now: string): Promise<UserRow | undefined>;
}

/** A live session with its user, and the API token it was signed in with (if any). */
export interface WebSessionWithUser {
  session: WebSessionRow;
  user: UserRow;
  /** Revocation and expiry of the API token the session was signed in with; null for a login code. */
  token: {
    revokedAt: string | null;
    expiresAt: string | null;
  } | null;
}
/** Reads and writes web console sessions (hashes only). */
export interface WebSessionRepo {
  insert(row: WebSessionRow): Promise<void>;
  findByHash(hash: string): Promise<WebSessionWithUser | undefined>;
  /**
   * Sessions that have not expired at `now` (ISO 8601), of every user or of `userId`, oldest first,
   * with the user's name and the display prefix of the API token each was signed in with (null
   * for a login code).
   */
  listLive(
    now: string,
    userId?: string,
  ): Promise<
    {
      session: WebSessionRow;
      userName: string;
      tokenPrefix: string | null;
    }[]
  >;
  /** Deletes the session with this id; false when there is none. */
  deleteById(id: string): Promise<boolean>;
  deleteByHash(hash: string): Promise<void>;
  /** Removes sessions that expired before `now` (ISO 8601), and those of revoked tokens. */
  deleteExpired(now: string): Promise<number>;
}

/**
 * The Expo "latest" update token of each project (docs/postgresql.md#update-channels): a worker
 * creates it while it deploys, any API node resolves it when a phone asks for the newest update.
 */
export interface UpdateChannelRepo {
  /**
   * The project's token (32 URL-safe base64 characters), created on first use. Two callers racing
   * for a new project get the same token; every project's token is different.
   * @throws the driver's error for a project that does not exist (foreign key)
   */
  tokenOf(projectId: string): Promise<string>;
  /** The project whose token this is, or null for an unknown token. */
  projectOf(token: string): Promise<string | null>;
  /**
   * Records `token` as the project's token unless the project has one already or the token is
   * taken (the import of token files kept by earlier versions).
   * @returns true when the row was written.
   */
  adopt(projectId: string, token: string, at: string): Promise<boolean>;
}

/**
 * The variables of each project's environment (docs/security.md "Project environment"); values
 * are stored as `ProjectEnvRow.value` says (secrets sealed by the caller).
 */
export interface ProjectEnvRepo {
  /** The project's variables, by name. */
  list(projectId: string): Promise<ProjectEnvRow[]>;
  /** Creates or replaces the variable `row.name` of `row.projectId`. */
  put(row: ProjectEnvRow): Promise<void>;
  /** Removes a variable. @returns false when the project had no variable of that name. */
  remove(projectId: string, name: string): Promise<boolean>;
}

/** A project's last workspace snapshot: the version it holds and its blob. */
export interface WorkspaceSnapshotRef {
  /** The project's `workspaceVersion` when the snapshot was taken. */
  version: number;
  blobId: string;
}

/**
 * The last completed workspace of each project, as a blob (docs/postgresql.md#workspace-snapshots).
 * Only a store with blobs has it: with SQLite every workflow runs on one host and the workspace
 * stays on its disk.
 */
export interface WorkspaceRepo {
  /** The project's snapshot, or null when none was taken. */
  snapshotOf(projectId: string): Promise<WorkspaceSnapshotRef | null>;
  /**
   * Records blob `blobId` (`bytes` long) as the project's snapshot at `version`, replacing the one
   * before. Call inside the transaction that records the completion.
   * @returns the id of the blob it replaced (remove it after COMMIT), or null.
   */
  saveSnapshot(projectId: string, version: number, blobId: string, bytes: number): Promise<string | null>;
}

/** The nodes serving the store now, each with its builder (docs/operators.md "One builder per deployment"). */
export interface NodeRepo {
  /** Writes a node's row, or moves on its `seenAt` and the rest when it exists. */
  upsert(row: NodeRow): Promise<void>;
  /** Deletes a node's row (it stops). */
  remove(runnerId: string): Promise<void>;
  /** The nodes whose row was written at or after `since` (ms on the database's clock), oldest first. */
  listSeenSince(since: number): Promise<NodeRow[]>;
}

/** What `svc_send_message` answered to each `requestId` (docs/contract.md#tools). */
export interface SendReceiptRepo {
  /** The stored answer (JSON) of `userId`'s `requestId`, when it was recorded at or after `since` (ms). */
  find(userId: string, requestId: string, since: number): Promise<string | undefined>;
  /** Stores an answer, replacing a row recorded before `since` (an older one no longer counts). */
  put(row: SendReceiptRow, since: number): Promise<void>;
  /** Replaces the stored answer of `userId`'s `requestId` (the send's final answer, after its commit). */
  setResult(userId: string, requestId: string, result: string): Promise<void>;
  /** Deletes `userId`'s rows recorded before `before` (ms). */
  deleteBefore(userId: string, before: number): Promise<void>;
}

/** Every repository of the store, by table. */
export interface Repos {
  readonly users: UserRepo;
  readonly tokens: TokenRepo;
  readonly projects: ProjectRepo;
  readonly workflows: WorkflowRepo;
  readonly messages: MessageRepo;
  readonly questions: QuestionRepo;
  readonly answerChecks: AnswerCheckRepo;
  readonly artifacts: ArtifactRepo;
  readonly processGroups: ProcessGroupRepo;
  readonly oauth: OAuthRepo;
  readonly loginCodes: LoginCodeRepo;
  readonly webSessions: WebSessionRepo;
  readonly updateChannels: UpdateChannelRepo;
  readonly releases: ReleaseRepo;
  readonly nodes: NodeRepo;
  readonly sendReceipts: SendReceiptRepo;
  readonly projectEnv: ProjectEnvRepo;
  /** Present only on a store with blobs (PostgreSQL); absent on SQLite (see `WorkspaceRepo`). */
  readonly workspaces?: WorkspaceRepo;
}
