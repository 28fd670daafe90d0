/**
 * `svc_get_session` asks the person a pending text question when the client can elicit
 * (docs/contract.md#elicitation): an accepted form is sent as the answer (as `svc_send_message`
 * with `questionId` would), a declined or cancelled one leaves the question pending. Code
 * questions are for the host's model and are never asked here.
 */
import type { Caller } from '../../auth/caller.js';
import { MAX_MESSAGE_LENGTH } from '../../core/message-limits.js';
import { ServiceError } from '../../errors.js';
import type { PendingQuestion, SessionView } from '../../services/resource-shapes.js';
import type { ElicitForm, Elicitation } from '../elicitation.js';
import type { ToolServices } from '../tool-services.js';

/** What became of the question asked (the session's `elicitation`). */
interface ElicitationReport {
  questionId: string;
  action: 'accept' | 'decline' | 'cancel';
  answered: boolean;
  note: string;
}

/** The form's one field. */
const FIELD = 'answer';

/**
 * `session` after asking its pending text question through `elicitation`, with `elicitation`
 * saying what the person did; `session` itself when there is nothing to ask (no question, a code
 * question, a caller who may not answer).
 * @throws ServiceError as `svc_send_message` does, except a refused answer (-32602), which is reported.
 */
export async function askPerson(
  session: SessionView,
  elicitation: Elicitation,
  caller: Caller,
  services: ToolServices,
): Promise<SessionView> {
  const question = session.pendingQuestion;
  if (question?.kind !== 'text' || !(await services.projects.mayAnswer(caller, session.projectId))) return session;
  const answer = await elicitation.ask(`question-${question.questionId}`, questionForm(question));
  const report = (
    action: ElicitationReport['action'],
    answered: boolean,
    note: string,
  ): SessionView & { elicitation: ElicitationReport } => ({
    ...session,
    elicitation: { questionId: question.questionId, action, answered, note },
  });
  if (answer.action !== 'accept') {
    const who = answer.action === 'decline' ? 'declined to answer' : 'dismissed the question';
    return report(
      answer.action,
      false,
      `The user ${who}: the question is still pending. Answer it with svc_send_message (questionId) when the user gives an answer.`,
    );
  }
  const text = answer.content[FIELD];
  if (typeof text !== 'string' || text.trim().length === 0)
    return report('accept', false, 'The user accepted the form without an answer: the question is still pending.');
  try {
    await services.workflows.send(caller, {
      projectId: session.projectId,
      message: text,
      questionId: question.questionId,
    });
  } catch (error) {
    if (!(error instanceof ServiceError) || error.kind !== 'invalid_params') throw error;
    return report(
      'accept',
      false,
      `The user's answer was refused (${refusalReason(error)}): the question is still pending.`,
    );
  }
  const after = await services.workflows.session(caller, session.projectId);
  return {
    ...after,
    ...(session.wait && { wait: session.wait }),
    elicitation: {
      questionId: question.questionId,
      action: 'accept',
      answered: true,
      note: `The user answered: ${JSON.stringify(text)}. The workflow goes on.`,
    },
  };
}

/** The form that asks `question`: its prompt, and one string field (its options as an enum, its pattern described). */
function questionForm(question: PendingQuestion): ElicitForm {
  const rule = question.options ? { enum: question.options } : { minLength: 1, maxLength: MAX_MESSAGE_LENGTH };
  return {
    message: question.prompt,
    requestedSchema: {
      type: 'object',
      properties: {
        [FIELD]: {
          type: 'string',
          title: 'Answer',
          ...(question.pattern && { description: `Must match the pattern ${question.pattern}` }),
          ...rule,
        },
      },
      required: [FIELD],
    },
  };
}

/** Why the service refused an answer, in its words. */
function refusalReason(error: ServiceError): string {
  const issues = (error.data as { issues?: { message?: unknown }[] } | undefined)?.issues;
  const first = issues?.find((issue) => typeof issue.message === 'string')?.message;
  return typeof first === 'string' ? first : error.message;
}
