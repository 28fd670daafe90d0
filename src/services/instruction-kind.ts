/**
 * The kind of workflow an instruction starts when `svc_send_message` is called without `kind`
 * (docs/contract.md#tools, `svc_send_message`). Starting a deploy by mistake can run an operator's
 * release script, so the rule is narrow and a model is told to pass `kind` instead:
 *
 * an instruction is a deploy only when it *begins* (after an optional "please") with deploy,
 * publish, release or ship used as a verb, and that first clause is not negated. "Deploy it" and
 * "Please publish to the stores" are deploys; "Build the login screen, but don't deploy yet",
 * "Release notes: ...", "Add a shipping address form", "Fix the release build" and "Publish
 * button on the settings screen" are builds.
 */

/** A workflow kind (docs/workflows.md "In short"). */
export type InstructionKind = 'build' | 'deploy';

/** The verbs that can start a deploy, in their imperative form only ("shipping" is not one). */
const LEADING_VERB = /^\s*(?:please\s*[,!]?\s+)?(deploy|publish|release|ship)\b(.*)$/is;

/**
 * Words that, right after the verb, make it a noun ("release notes", "publish button", "ship
 * date"): the instruction then describes something to build.
 */
const NOUN_FOLLOWERS = new Set([
  'notes',
  'note',
  'build',
  'builds',
  'button',
  'buttons',
  'candidate',
  'date',
  'dates',
  'branch',
  'pipeline',
  'script',
  'scripts',
  'process',
  'checklist',
  'key',
  'keys',
  'page',
  'pages',
  'screen',
  'screens',
  'settings',
  'flow',
  'log',
  'logs',
  'channel',
  'config',
  'configuration',
  'target',
  'targets',
  'form',
  'forms',
  'dialog',
  'modal',
  'status',
  'history',
  'icon',
  'step',
  'steps',
  'workflow',
  'job',
  'tab',
  'menu',
  'option',
  'options',
  'number',
  'cycle',
  'schedule',
  'train',
  'mode',
  'info',
  'details',
  'section',
  'is',
  'was',
  'should',
  'will',
  'fails',
  'failed',
  'broke',
  'broken',
]);

/** A negation inside the first clause ("Deploy it not yet", "Ship nothing", "Release it? never"). */
const NEGATION = /\b(?:not|never|nothing|no|don't|dont|do\s+not|without|n't)\b|n't\b/i;

/** A negation of the request anywhere in the message ("Ship it? Not yet", "... but do not deploy"). */
const WITHDRAWN =
  /\bnot\s+(?:yet|now)\b|\b(?:don'?t|do\s+not|never|no\s+need\s+to)\s+(?:\w+\s+)?(?:deploy|publish|release|ship)\b/i;

/** Where the first clause ends. */
const CLAUSE_END = /[.;!?\n]|,\s*(?:but|and|then)\b|\s+but\b/i;

/**
 * `deploy` when `message` begins with an unnegated request to deploy, publish, release or ship;
 * otherwise `build`. Pure; never throws.
 */
export function inferKind(message: string): InstructionKind {
  const match = LEADING_VERB.exec(message);
  if (!match) return 'build';
  const rest = match[2] ?? '';
  // "Release: ..." or "Deploy - ..." is a heading, not a request.
  if (/^\s*[:\-–—]/.test(rest)) return 'build';
  const next = /^\s*([\p{L}']+)/u.exec(rest)?.[1]?.toLowerCase();
  if (next !== undefined && NOUN_FOLLOWERS.has(next)) return 'build';
  const end = CLAUSE_END.exec(rest);
  const clause = end ? rest.slice(0, end.index) : rest;
  if (NEGATION.test(clause) || WITHDRAWN.test(rest)) return 'build';
  return 'deploy';
}
