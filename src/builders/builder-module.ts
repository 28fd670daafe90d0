/**
 * What a builder brings besides its `Builder` (docs/architecture.md, "Builders"): one
 * `BuilderModule` per builder, listed in `builder-registry.ts`. The module creates the builder from
 * the server's settings and declares the rest of its wing: HTTP routes for what it publishes,
 * checks of answers to its kinds of question, the rules of those answers as the
 * `svc_send_message` description tells a model, and what it needs at start-up.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Builder, Platform } from './builder.js';
import type { BuildSandbox } from './process-sandbox.js';

/** A published artifact as a builder's routes read it. */
export interface PublishedArtifactInfo {
  id: string;
  projectId: string;
  /** The workflow that published it (null for artifacts that outlived theirs). */
  workflowId: string | null;
  kind: 'preview' | 'deployment' | 'export';
  platform: Platform;
  number: number | null;
  externalUrl: string | null;
}

/** Read-only access to published artifacts and their files (the service's artifact reader fits it). */
interface PublishedArtifacts {
  /** The artifact with id `id`, or undefined. */
  find(id: string): Promise<PublishedArtifactInfo | undefined>;
  /**
   * The deployment for `platform` a phone of `channel` gets: the channel's staged rollout when the
   * phone's `eas-client-id` (`clientId`, null when it sent none) falls in it, else the channel's
   * serving deploy (docs/releases.md "What a phone gets"); undefined when there is none.
   */
  channelDeployment(
    projectId: string,
    channel: string,
    platform: Platform,
    clientId: string | null,
  ): Promise<PublishedArtifactInfo | undefined>;
  /** The artifact of the same kind for `platform` published by the same workflow, or undefined. */
  sibling(artifact: PublishedArtifactInfo, platform: Platform): Promise<PublishedArtifactInfo | undefined>;
  /** The file for `subPath` inside artifact `id`, or null when it leaves the artifact's folder or names nothing. */
  resolveFile(id: string, subPath: string): Promise<string | null>;
  /** The release of deployment `artifact`, with its changes and their unified diff, or undefined (docs/releases.md "Changes"). */
  releaseOf(artifact: PublishedArtifactInfo): Promise<DeploymentRelease | undefined>;
  /** The project whose "latest" update token (`/updates/latest/<token>`) this is, or null. */
  projectOfUpdateChannel(token: string): Promise<string | null>;
}

/** A deployment's release as its page shows it. */
export interface DeploymentRelease {
  number: number;
  channel: string;
  rolloutPercent: number;
  /** The channel's deploy before it, or null for the channel's first. */
  previousNumber: number | null;
  /** The files changed since `previousNumber`, with their added and removed lines. */
  changes: { path: string; added: number; removed: number }[];
  /** The unified diff of those changes (cut when long). */
  patch: string;
}

/** What a builder's routes read at each request. */
export interface BuilderRouteSources {
  artifacts: PublishedArtifacts;
  /** Base of artifact links (no trailing slash), read at each request. */
  artifactBaseUrl(): string;
}

/** One route a builder adds to the artifact listener; the transport applies the artifact host check first. */
interface BuilderRoute {
  /** The path it serves, as the HTTP pipeline mounts it: exact, or a prefix ending in `*` (`/updates/*`). */
  path: string;
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void>;
}

/** The HTTP routes of one builder, bound to one listener. */
export interface BuilderRoutes {
  /** Routes under the builder's own paths (`/updates/...`). */
  routes: BuilderRoute[];
  /**
   * A page served in place of a published artifact's files (`/deployments/<id>/`), or false when
   * `path` is not one of the builder's (the artifact's files are served instead).
   */
  landing?(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
}

/** One reason an answer was refused: `parameter` is where (`message.files[1].path`), `problem` why. */
interface AnswerIssue {
  parameter: string;
  problem: string;
}

/**
 * The verdict on an answer: accepted with the text the conversation shows for it, or refused with
 * every problem found (-32602, the question stays pending). `unavailable`: the checker lacks the
 * tools the check needs (the builder's toolchain is not installed here); another node, one that
 * builds, may be able to check it (docs/workflows.md "Where answers are checked").
 */
export type AnswerVerdict = { ok: true; content: string } | { ok: false; issues: AnswerIssue[]; unavailable?: true };

/** One file of a question's pages of files (`svc_get_session`'s `questionFilesPage`). */
export interface PagedFile {
  path: string;
  content: string;
  /** The file is longer than a page: `content` is its start. */
  cut?: boolean;
}

/** The rules of one kind of question a builder asks (QuestionSpec `kind` other than `text`). */
export interface QuestionKindRules {
  /**
   * Checks an answer against the rules stored with its question (`rules`, the JSON of
   * `QuestionSpec.rules`, null when absent) and whatever they name on disk; writes nothing. Paths
   * in stored rules are relative to the project's workspace `workspaceDir` (absolute ones, of
   * questions stored before, are kept as they are).
   */
  checkAnswer(rules: string | null, answer: string, workspaceDir: string): AnswerVerdict;
  /**
   * The rules as they are to be stored, given as the builder asked (`QuestionSpec.rules`): paths
   * made relative to the project's workspace `workspaceDir`. Absent: stored as asked.
   */
  toStore?(rules: unknown, workspaceDir: string): unknown;
  /** The pages of files the question shows, or null when its rules name none. Paths as for `checkAnswer`. */
  filePages?(rules: string | null, workspaceDir: string): Promise<PagedFile[][] | null>;
}

/** The settings every builder may read: the data dir and the sandbox of build processes. */
export interface CommonBuilderSettings {
  /** The server's data dir (absolute). */
  dataDir: string;
  /** Where build processes run (absent: the builder's default). */
  buildSandbox?: BuildSandbox | undefined;
}

/**
 * A builder and its wing. `S` is the part of the server's settings (`AppConfig`) it reads; the
 * registry checks at compile time that `AppConfig` has every field each module reads.
 */
export interface BuilderModule<N extends string = string, S = object> {
  /** The `--builder` name. */
  readonly name: N;
  /** False for a builder that starts no process (it needs no build sandbox). */
  readonly runsProcesses: boolean;
  /** @throws Error for settings that do not fit (a missing config file, an unknown SDK). */
  create(settings: S & CommonBuilderSettings): Builder;
  /**
   * Checks made once at start-up, whatever builder runs (a bad key fails at start, not on a
   * phone's first request). @throws Error naming the setting and the fix.
   */
  checkSettings?(settings: S & CommonBuilderSettings): void;
  /**
   * The routes of what this builder publishes, for one listener. Mounted whatever builder runs:
   * published artifacts outlive the builder that made them. @throws Error for unreadable settings.
   */
  routes?(sources: BuilderRouteSources, settings: S & CommonBuilderSettings): BuilderRoutes;
  /** The kinds of question this builder asks, by `QuestionSpec.kind`, with their answer checks. */
  readonly questionKinds?: Readonly<Record<string, QuestionKindRules>>;
  /** Bullet lines (each starting with "- ") that `svc_send_message`'s description gives about answering its questions. */
  readonly messageRules?: readonly string[];
  /** A conversation message as a reader who is not the project's owner sees it (private links hidden). */
  readonly forOtherReaders?: (content: string) => string;
}

/** Declares a builder module, keeping its name's literal type (for `BuilderName`). */
export function defineBuilder<N extends string, S>(module: BuilderModule<N, S>): BuilderModule<N, S> {
  return module;
}
