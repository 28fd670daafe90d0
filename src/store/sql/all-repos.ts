/**
 * The repositories written once over the dialect seam (`dialect.ts`), for one drizzle handle: the
 * store's, or a transaction's (docs/architecture.md "The store port").
 */
import type { ReadCache } from '../read-cache.js';
import type { Repos } from '../repos.js';
import type { ProjectRow } from '../rows.js';
import { SqlAnswerCheckRepo } from './answer-check-repo.js';
import { SqlArtifactRepo } from './artifact-repo.js';
import type { Dialect } from './dialect.js';
import { SqlLoginCodeRepo } from './login-code-repo.js';
import { SqlMessageRepo } from './message-repo.js';
import { SqlNodeRepo } from './node-repo.js';
import { SqlOAuthRepo } from './oauth-repo.js';
import { SqlProcessGroupRepo } from './process-group-repo.js';
import { SqlProjectEnvRepo } from './project-env-repo.js';
import { SqlProjectRepo } from './project-repo.js';
import { SqlQuestionRepo } from './question-repo.js';
import { SqlReleaseRepo } from './release-repo.js';
import { SqlSendReceiptRepo } from './send-receipt-repo.js';
import { SqlTokenRepo } from './token-repo.js';
import { SqlUpdateChannelRepo } from './update-channel-repo.js';
import { SqlUserRepo } from './user-repo.js';
import { SqlWebSessionRepo } from './web-session-repo.js';
import { SqlWorkflowRepo, type QueuedRows } from './workflow-repo.js';

/** The names of the repositories in `sqlRepos`, in the order of `Repos`. */
export const REPO_NAMES = [
  'users',
  'tokens',
  'projects',
  'workflows',
  'messages',
  'questions',
  'answerChecks',
  'artifacts',
  'processGroups',
  'oauth',
  'loginCodes',
  'webSessions',
  'updateChannels',
  'nodes',
  'sendReceipts',
  'releases',
  'projectEnv',
] as const;

/** Every repository of both backends (PostgreSQL adds its own `workspaces`). */
export type SharedRepos = Omit<Repos, 'workspaces'>;

/**
 * Every repository on the seam, over `d`.
 * @param projectCache the read cache of project rows by id, shared by every handle of one store.
 * @param queuedRows the queued workflow rows kept by `workflows.listQueued`, shared by every handle of one store.
 */
export function sqlRepos(d: Dialect, projectCache?: ReadCache<ProjectRow>, queuedRows?: QueuedRows): SharedRepos {
  return {
    users: new SqlUserRepo(d),
    tokens: new SqlTokenRepo(d),
    projects: new SqlProjectRepo(d, projectCache),
    workflows: new SqlWorkflowRepo(d, queuedRows),
    messages: new SqlMessageRepo(d),
    questions: new SqlQuestionRepo(d),
    answerChecks: new SqlAnswerCheckRepo(d),
    artifacts: new SqlArtifactRepo(d),
    processGroups: new SqlProcessGroupRepo(d),
    loginCodes: new SqlLoginCodeRepo(d),
    webSessions: new SqlWebSessionRepo(d),
    updateChannels: new SqlUpdateChannelRepo(d),
    nodes: new SqlNodeRepo(d),
    oauth: new SqlOAuthRepo(d),
    sendReceipts: new SqlSendReceiptRepo(d),
    releases: new SqlReleaseRepo(d),
    projectEnv: new SqlProjectEnvRepo(d),
  };
}
