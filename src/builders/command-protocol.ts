/**
 * The command builder's line protocol: a line a command prints on stdout that starts with `::`
 * is a directive; every other line (stdout and stderr) is output, streamed into the conversation.
 *
 * | line | effect |
 * |---|---|
 * | `::step 2/5 Bundling JavaScript` | records step 2 of 5 |
 * | `::preview web dist` | publishes workspace folder `dist` as a web preview (`web`, `ios`, `android`) |
 * | `::deployment android out/apk` | publishes a folder as a numbered, immutable deployment |
 * | `::preview-url ios https://expo.dev/preview/abc` | records an external preview URL (http/https) |
 * | `::deployment-url web https://myapp.example.com` | records an external deployment URL |
 * | `::ask app_id {"prompt":"App id?","pattern":"[a-z.]+"}` | asks the user; the answer arrives on stdin as one line |
 * | `::result Built 3 screens` | posts a result message |
 * | `::message Waiting for the simulator` | posts an agent message |
 */
import { z } from 'zod';
import { compileAnswerPattern, MAX_PATTERN_LENGTH } from './answer-pattern.js';
import type { Platform, QuestionSpec } from './builder.js';

/** One parsed `::` line of the command builder's protocol (table above). */
export type Directive =
  | { type: 'step'; index: number; total: number; name: string }
  | { type: 'artifact'; kind: 'preview' | 'deployment'; platform: Platform; folder: string }
  | { type: 'url'; kind: 'preview' | 'deployment'; platform: Platform; url: string }
  | { type: 'ask'; question: QuestionSpec }
  | { type: 'result'; text: string }
  | { type: 'message'; text: string };

const PLATFORMS = new Set(['web', 'ios', 'android']);
const askBody = z.strictObject({
  prompt: z.string().min(1).max(2000),
  options: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
  pattern: z.string().min(1).max(MAX_PATTERN_LENGTH).optional(),
});

/** The directive a line holds, or null for an ordinary output line (including malformed directives). */
export function parseDirective(line: string): Directive | null {
  if (!line.startsWith('::')) return null;
  const space = line.indexOf(' ');
  const verb = space === -1 ? line.slice(2) : line.slice(2, space);
  const rest = space === -1 ? '' : line.slice(space + 1).trim();
  switch (verb) {
    case 'step': {
      const m = /^(\d{1,4})\/(\d{1,4})\s+(.+)$/.exec(rest);
      if (!m) return null;
      const index = Number(m[1]);
      const total = Number(m[2]);
      return index >= 1 && index <= total ? { type: 'step', index, total, name: m[3]!.slice(0, 200) } : null;
    }
    case 'preview':
    case 'deployment': {
      const m = /^(\S+)\s+(.+)$/.exec(rest);
      if (!m || !PLATFORMS.has(m[1]!)) return null;
      return { type: 'artifact', kind: verb, platform: m[1] as Platform, folder: m[2]! };
    }
    case 'preview-url':
    case 'deployment-url': {
      const m = /^(\S+)\s+(https?:\/\/\S+)$/.exec(rest);
      if (!m || !PLATFORMS.has(m[1]!)) return null;
      return {
        type: 'url',
        kind: verb === 'preview-url' ? 'preview' : 'deployment',
        platform: m[1] as Platform,
        url: m[2]!,
      };
    }
    case 'ask': {
      const m = /^([A-Za-z0-9_.-]{1,64})\s+(\{.*\})$/.exec(rest);
      if (!m) return null;
      let body: unknown;
      try {
        body = JSON.parse(m[2]!);
      } catch {
        return null;
      }
      const parsed = askBody.safeParse(body);
      if (!parsed.success) return null;
      // A pattern must be RE2 syntax: answers are matched in linear time (see answer-pattern.ts).
      if (parsed.data.pattern && !compileAnswerPattern(parsed.data.pattern)) return null;
      return { type: 'ask', question: { key: m[1]!, ...parsed.data } };
    }
    case 'result':
      return rest ? { type: 'result', text: rest } : null;
    case 'message':
      return rest ? { type: 'message', text: rest } : null;
    default:
      return null;
  }
}
