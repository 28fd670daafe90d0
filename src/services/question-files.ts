/**
 * The app files of a pending code question, page by page (`svc_get_session` with
 * `questionFilesPage`, docs/contract.md#tools): the pages its question kind's `filePages` gives
 * (`builders/builder-module.ts`), stored when the question was asked.
 */
import { join } from 'node:path';
import { invalidParameter } from '../errors.js';
import type { PagedFile } from '../builders/builder-module.js';
import { questionKind } from '../builders/builder-registry.js';
import type { Repos } from '../store/repos.js';
import type { SessionView } from './resource-shapes.js';

/** Where the pages are read: the question rows, and `<dataDir>/workspaces` for a question stored before pages were. */
export interface QuestionFilesDeps {
  repos: Pick<Repos, 'questions'>;
  workspacesDir: string;
}

/**
 * `view` (the session just read) with page `page` (1-based) of the app files of its pending code
 * question: page 1 is what the prompt shows, the others what it lists. The prompt itself is left
 * out of this answer (it was read already), so the result stays small.
 * @throws ServiceError -32602 when no code question is waiting, or `page` is past the last page
 *   (`data.pages`).
 */
export async function withQuestionFiles(
  deps: QuestionFilesDeps,
  view: SessionView,
  page: number,
): Promise<SessionView> {
  const { questions } = deps.repos;
  const question = view.pendingQuestion;
  const row =
    question && questionKind(question.kind)?.filePages ? await questions.pendingOf(question.workflowId) : undefined;
  // Stored when the question was asked (every node serves the same pages); read from this
  // node's workspace for a question stored before pages were.
  const stored = row ? await questions.filePagesOf(row.id) : undefined;
  const pages =
    stored !== undefined
      ? (JSON.parse(stored) as PagedFile[][])
      : row?.rules
        ? await questionKind(row.kind)?.filePages?.(row.rules, join(deps.workspacesDir, row.projectId))
        : null;
  if (!question || !pages)
    throw invalidParameter(
      'questionFilesPage',
      'can be read only while a code question is waiting (see pendingQuestion)',
    );
  if (page > pages.length)
    throw invalidParameter(
      'questionFilesPage',
      `must be at most ${pages.length} (the question's files fill ${pages.length} page${pages.length === 1 ? '' : 's'})`,
      { pages: pages.length },
    );
  const { format: _format, ...rest } = question;
  return {
    ...view,
    pendingQuestion: {
      ...rest,
      prompt: '(left out while reading files: call svc_get_session without questionFilesPage for the prompt)',
    },
    questionFiles: { questionId: question.questionId, page, pages: pages.length, files: pages[page - 1]! },
  };
}
