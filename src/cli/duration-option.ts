/**
 * The `--expires-in` option of `token create` and `login-code` (docs/cli.md#command-line).
 */
import { parseDuration } from '../auth/api-token.js';

/**
 * A duration such as `30d`, `12h` or `90m`, in milliseconds.
 * @throws Error for text that is no duration: thrown inside an action, so a plain Error, which
 *   `run` (main.ts) prints before it exits 1.
 */
export function parseDurationOption(text: string): number {
  return parseDuration(text);
}
