/**
 * Reusable zod parameter types with the rules of docs/contract.md#tools: lengths count Unicode code
 * points (not UTF-16 units), ids are UUIDs. Each also shows its rule in the tool's JSON Schema.
 */
import { z } from 'zod';

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Whether `text` has at most `max` Unicode code points. Its UTF-16 length bounds that count from
 * above, so only a longer text is walked (an iterator result per code point), and only until it
 * passes `max`.
 */
function atMostCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let n = 0;
  for (const _ of text) if (++n > max) return false;
  return true;
}

/**
 * A string of at most `max` code points; `nonBlank` also refuses empty and whitespace-only text.
 * Ill-formed UTF-16 (a lone surrogate) is refused: it could not be stored as given.
 */
export function boundedText(max: number, description: string, options: { nonBlank?: boolean } = {}) {
  let schema = z
    .string()
    .refine((s) => s.isWellFormed(), { message: 'must be valid Unicode text (no lone surrogates)' })
    // NUL cannot travel through a process environment or a C string: refused here rather than
    // failing every later build of the text.
    .refine((s) => !s.includes('\u0000'), { message: 'must not contain NUL characters' });
  if (options.nonBlank) schema = schema.refine((s) => s.trim().length > 0, { message: 'must not be empty or blank' });
  return schema
    .refine((s) => atMostCodePoints(s, max), { message: `must be at most ${max} characters` })
    .meta({ maxLength: max, ...(options.nonBlank ? { minLength: 1 } : {}), description });
}

/**
 * A UUID (any version; ours are v4), e.g. a project or workflow id. UUIDs compare without regard
 * to case (RFC 9562): the value is handed on in lower case, as ids are stored.
 */
export function uuidParameter(description: string) {
  return z
    .string()
    .refine((s) => UUID_PATTERN.test(s), { message: 'must be a UUID' })
    .meta({ format: 'uuid', description })
    .transform((s) => s.toLowerCase());
}
