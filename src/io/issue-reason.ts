/**
 * The reason of a -32602 error, in the words of docs/contract.md#errors, for one zod validation
 * issue: `must be an integer`, `must be at least 1`, `must be at most 255 characters`, `is not a
 * parameter of this tool`. zod's own wording (`Too small: expected number to be >=1`) never
 * reaches a caller: an issue this file does not know becomes `is not valid`.
 */
import type { z } from 'zod';

/** `an integer`, `a string`, `an object`: the expected type of an `invalid_type` issue. */
function describeType(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'nonoptional') return 'given';
  if (expected === 'object' || expected === 'array' || expected === 'integer') return `an ${expected}`;
  return `a ${expected}`;
}

/** `5 characters`, `3 items`, `1`: a size bound in the unit of what it bounds. */
function bound(origin: string, value: number | bigint): string {
  if (origin === 'string') return `${value} character${value === 1 || value === 1n ? '' : 's'}`;
  if (origin === 'array' || origin === 'set') return `${value} item${value === 1 || value === 1n ? '' : 's'}`;
  return String(value);
}

/** `must be at least 1`, `must be at most 255 characters`: numbers bound the value, strings and lists their length. */
function sizeReason(
  origin: string,
  value: number | bigint,
  side: 'least' | 'most',
  inclusive: boolean | undefined,
  exact: boolean | undefined,
): string {
  const sized = origin === 'string' || origin === 'array' || origin === 'set';
  if (exact) return `must be exactly ${bound(origin, value)}`;
  if (sized && side === 'least' && (value === 1 || value === 1n)) return 'must not be empty';
  if (inclusive === false && !sized)
    return side === 'least' ? `must be greater than ${value}` : `must be less than ${value}`;
  return `must be at ${side} ${bound(origin, value)}`;
}

/**
 * Our reasons start with one of these words; a refinement's message that does not (zod's default
 * `Invalid input`) is not shown.
 */
const OUR_REASON = /^(must|is|are|has|does|cannot) /;

/** The reason of one issue, written by us (see the file's comment). */
export function issueReason(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${describeType(issue.expected)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return sizeReason(issue.origin, issue.minimum, 'least', issue.inclusive, issue.exact);
    case 'too_big':
      return sizeReason(issue.origin, issue.maximum, 'most', issue.inclusive, issue.exact);
    case 'invalid_format':
      if (issue.format === 'uuid' || issue.format === 'guid') return 'must be a UUID';
      // A pattern's own message when it is in our words (`.regex(re, 'must be …')`).
      if (issue.format === 'regex')
        return OUR_REASON.test(issue.message) ? issue.message : 'does not have the required form';
      return `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return 'is not a parameter of this tool';
    case 'custom':
      return OUR_REASON.test(issue.message) ? issue.message : 'is not valid';
    default:
      return 'is not valid';
  }
}
