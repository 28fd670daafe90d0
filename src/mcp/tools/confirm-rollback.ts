/**
 * `svc_send_message` with `kind: "rollback"` asks the person to confirm first, when the client can
 * elicit (docs/releases.md "Confirmation"): accepted with "Roll back", the rollback is sent; declined,
 * dismissed or answered otherwise, it is recorded as cancelled and nothing is rolled back. A
 * client without the capability is not asked (its model decided; the tool description tells it
 * to ask the user first).
 */
import type { Caller } from '../../auth/caller.js';
import type { SendMessageResult } from '../../services/resource-shapes.js';
import type { SendMessageInput } from '../../services/send-record.js';
import type { Elicitation } from '../elicitation.js';
import type { ToolServices } from '../tool-services.js';

/** The form's one field and the answer that confirms. */
const FIELD = 'confirm';
const CONFIRM = 'Roll back';

/**
 * Sends rollback `input` after the person confirmed it through `elicitation`, or records it as
 * declined (`status: "cancelled"`).
 * @throws ServiceError -32602 for a message that names none of the project's deploys (before
 *   asking anything), and what `svc_send_message` throws.
 */
export async function confirmRollback(
  input: SendMessageInput,
  elicitation: Elicitation,
  caller: Caller,
  services: ToolServices,
): Promise<SendMessageResult> {
  await services.workflows.checkRollback(caller, input);
  const number = input.message.trim().replace(/^#/, '');
  const answer = await elicitation.ask(`rollback-${input.projectId}-${number}`, {
    message: `Roll back to deploy #${number}? Its bundles are published again as a new deploy on its channel, to every phone of the channel, and any rollout there ends.`,
    requestedSchema: {
      type: 'object',
      properties: {
        [FIELD]: { type: 'string', title: 'Confirm the rollback', enum: [CONFIRM, 'Keep the current deploy'] },
      },
      required: [FIELD],
    },
  });
  if (answer.action === 'accept' && answer.content[FIELD] === CONFIRM) return services.workflows.send(caller, input);
  return services.workflows.declineRollback(caller, input);
}
