/**
 * The building agent's interface (docs/builders.md#builders). The workflow engine calls `run` once per
 * workflow (again after a restart, for a workflow resumed by an answer); the builder reports
 * through the context and finishes by returning (completed) or throwing (failed). When `signal`
 * aborts (cancel or shutdown) it must stop promptly; whatever it throws then is ignored.
 */
export type Platform = 'web' | 'ios' | 'android';

/** What to build or deploy. */
export interface BuildJob {
  workflowId: string;
  kind: 'build' | 'deploy';
  /** A deploy's channel (docs/releases.md): its latest update URL is the channel's. Absent: production. */
  channel?: string;
  /** The user's instruction for this workflow. */
  instruction: string;
  /** The project; `ownerId` is its owner's user id (heavy steps take turns between owners). */
  project: { id: string; name: string; description: string | null; ownerId: string };
  /** Instructions of the project's earlier completed workflows, oldest first. */
  history: string[];
  /** A folder the builder owns for this project; it persists across workflows. */
  workspaceDir: string;
  /** Aborted on cancel, on shutdown, and when this server loses the workflow's lease. */
  signal: AbortSignal;
  /**
   * Present for a restore (docs/builders.md "Checkpoints"): the build makes the workspace the files
   * of the checkpoint of workflow `workflowId`, read from `archive` (the export's zip, as the
   * builder published it), instead of applying an instruction. Only a builder with `restores` gets one.
   */
  restore?: { workflowId: string; deployNumber: number | null; archive: string };
  /**
   * The project's environment (docs/security.md "Project environment"): for the build's own
   * processes only. `EXPO_PUBLIC_*` plain values may reach the app; secrets never leave the
   * processes' environment (the engine redacts them from every report and refuses to publish files
   * that hold one). Absent: none.
   */
  env?: BuildEnvironment;
}

/** A project's environment for one build: plain values and secrets, by name. */
export interface BuildEnvironment {
  plain: Record<string, string>;
  secrets: Record<string, string>;
}

/** A question for the user; the answer must equal one of `options`, or match all of `pattern`. */
export interface QuestionSpec {
  /** The builder's stable name for the question (`app_identifier`). */
  key: string;
  prompt: string;
  options?: string[];
  /** A JavaScript regular expression source, matched against the whole answer. */
  pattern?: string;
  /**
   * `text` (default): a person's answer. `code`: files for the app, as JSON checked against
   * `rules` when it is sent (docs/builders.md "Code questions"); `options` and `pattern` do not apply.
   */
  kind?: 'text' | 'code';
  /** JSON Schema of the answer, shown to the client (code questions). */
  format?: Record<string, unknown>;
  /** Longest answer in code points (code questions; default: the instruction limit). */
  maxLength?: number;
  /**
   * What an answer must pass before it is accepted (a code question: the expo builder's code
   * answer rules), stored as JSON with the question and read by its kind's check (`builder-module.ts`).
   */
  rules?: object;
}

/**
 * A published preview, deployment or export (a checkpoint's source zip, docs/builders.md
 * "Checkpoints"). `path` is the service-relative URL path (`/previews/<id>/`).
 */
export interface PublishedArtifact {
  id: string;
  kind: 'preview' | 'deployment' | 'export';
  platform: Platform;
  number: number | null;
  path: string | null;
  externalUrl: string | null;
}

/** The one file of an export artifact (the app's source as a zip), under its folder. */
export const EXPORT_ARCHIVE = 'source.zip';

/** What to publish: a folder of files to serve, another artifact's files, or an external URL. */
export type PublishRequest =
  | { kind: 'preview' | 'deployment'; platform: Platform; sourceDir: string }
  | {
      kind: 'export';
      platform: 'web';
      sourceDir: string;
      /**
       * The files are copied at once, the row recorded only once this settles: when it rejects,
       * nothing is recorded, the copy is removed and `publish` rejects with its reason (a
       * checkpoint copied beside the publication of the preview it must follow). It may reject
       * before `publish` waits on it: give it a handler.
       */
      recordAfter?: Promise<unknown>;
    }
  | { kind: 'deployment'; platform: Platform; fromArtifactId: string }
  | { kind: 'preview' | 'deployment'; platform: Platform; externalUrl: string };

/** How a builder reports (every call is written to the store before its promise resolves; await each one). */
export interface BuildContext {
  /** Records progress: step `index` (1-based) of `total`, and posts it as a progress message. */
  step(index: number, total: number, name: string): Promise<void>;
  /** Posts an agent message to the conversation. */
  say(content: string, type?: 'progress' | 'result'): Promise<void>;
  /**
   * Asks the user and waits for a valid answer (the workflow is `waiting_for_input` meanwhile).
   * A question already answered in this workflow (a resumed run) resolves at once.
   * @throws the abort reason when the workflow is cancelled or the server shuts down.
   */
  ask(question: QuestionSpec): Promise<string>;
  /** The latest answer the project gave to a question with `key` in any workflow, or null. */
  recall(key: string): Promise<string | null>;
  /** Publishes artifacts; files are copied, so the builder may change its workspace afterwards. */
  publish(request: PublishRequest): Promise<PublishedArtifact>;
  /** The project's newest preview for `platform`, or null. */
  latestPreview(platform: Platform): Promise<PublishedArtifact | null>;
  /**
   * The secret token of the project's "latest" update URL (`/updates/latest/<token>`, Expo
   * Updates), created on first use and the same for every later call and every node.
   */
  updateChannelToken(): Promise<string>;
  /**
   * Records a process group (`pgid`, as from a detached spawn) the build started, before the
   * builder waits on it. The engine stores it, so that whoever takes the workflow over or restarts
   * on this host kills the group, and it kills any group still recorded when the run ends
   * (SIGTERM, then SIGKILL after a capped grace period). The next workflow of the project does
   * not start while a recorded group lives.
   * @throws when the server no longer holds the workflow (the group is then killed at once).
   */
  trackProcessGroup(pgid: number): Promise<void>;
  /** Forgets a group that has ended (call once the group's leader has exited and been waited for). */
  untrackProcessGroup(pgid: number): Promise<void>;
}

/** A building agent. */
export interface Builder {
  readonly name: string;
  /**
   * True when the builder publishes an export of the app's files with every completed workflow
   * and can make the workspace one of them again (`BuildJob.restore`; docs/builders.md "Checkpoints").
   */
  readonly restores?: boolean;
  run(job: BuildJob, context: BuildContext): Promise<void>;
}

/** An error a builder throws to fail a workflow with a specific `error.code`. */
export class BuildFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BuildFailure';
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Lets a report (`context.say` from an output callback) finish on its own. Its failure is not
 * lost: a write refused because the run lost its lease has already stopped the run, and a store
 * failure surfaces at the run's next awaited report.
 */
export function reportInBackground(report: Promise<unknown>): void {
  report.catch(() => undefined);
}
