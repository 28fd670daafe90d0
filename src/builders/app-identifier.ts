/**
 * The app identifier a deploy publishes under (what app stores call a bundle id or package name).
 * Every builder that deploys asks for it once per project and reuses the answer.
 */
import type { BuildContext } from './builder.js';

/** Reverse-DNS app identifier, e.g. `com.example.app`. */
const APP_IDENTIFIER_PATTERN = '[a-zA-Z][a-zA-Z0-9_]*(\\.[a-zA-Z][a-zA-Z0-9_]*)+';

/**
 * The project's app identifier: the answer it gave before, else asks (the workflow waits for input).
 * @throws the abort reason when the workflow is cancelled while waiting.
 */
export async function appIdentifier(context: BuildContext): Promise<string> {
  return (
    (await context.recall('app_identifier')) ??
    (await context.ask({
      key: 'app_identifier',
      prompt:
        'Which app identifier should this app be published under? Use reverse-DNS form, for example com.example.myapp.',
      pattern: APP_IDENTIFIER_PATTERN,
    }))
  );
}
