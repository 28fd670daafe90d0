/**
 * Lengths of a message, in characters (code points), as docs/contract.md states them. Not
 * settings (no flag changes them) but facts of the contract that several layers check or show:
 * the journal, the workflow service, `svc_send_message`'s schema, the web console's forms and
 * the expo builder's code questions. A leaf of `core/` (docs/architecture.md, "Layers"): every
 * layer may read it.
 */

/**
 * Longest message, in Unicode code points: the bound `svc_send_message` puts on a user's text
 * (an instruction, an answer to a question that is not a code question), and the length at
 * which builder and system text is cut when stored. User text is never cut.
 */
export const MAX_MESSAGE_LENGTH = 20_000;

/**
 * Longest answer to a code question, in code points: what `svc_send_message` accepts at most.
 * Each code point of a valid answer takes at most 4 bytes in the JSON-RPC request (an escaped
 * quote, backslash or line break 2, a code point outside the BMP 4; files may hold no other
 * control characters), so such an answer fits the 1 MiB HTTP body and stdio line limits at
 * their default (docs/builders.md "Code questions"); the expo builder's code questions take it as `maxLength`.
 */
export const MAX_CODE_ANSWER_LENGTH = 240_000;
