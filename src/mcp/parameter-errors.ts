/**
 * Turns zod validation issues into the -32602 errors of docs/contract.md#errors:
 * `Missing required parameter: <name>` when a required parameter is absent, else
 * `Invalid parameter: <name> <reason>`; `data.issues` lists every problem found. Every reason is
 * ours (`src/io/issue-reason.ts`), never zod's wording.
 */
import type { z } from 'zod';
import { invalidParameter, missingParameter, type ServiceError } from '../errors.js';
import { issueReason } from '../io/issue-reason.js';

/** One problem with one parameter, as listed in `error.data.issues`. */
interface ParameterIssue {
  parameter: string;
  problem: string;
}

/** `name`, `options.platform`, `items[2]`: a readable path of a parameter. */
function parameterPath(path: readonly PropertyKey[], prefix: string): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || 'arguments';
}

function hasPath(input: unknown, path: readonly PropertyKey[]): boolean {
  let node: unknown = input;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, key)) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node !== undefined;
}

/**
 * @param issues the issues of a failed `safeParse` of `input`.
 * @param prefix prepended to parameter names (`params` for protocol-level parameters).
 * @returns the -32602 ServiceError to throw.
 */
export function parameterError(issues: readonly z.core.$ZodIssue[], input: unknown, prefix = ''): ServiceError {
  const listed: ParameterIssue[] = [];
  let missing: string | undefined;
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        listed.push({ parameter: parameterPath([...issue.path, key], prefix), problem: issueReason(issue) });
      }
      continue;
    }
    const name = parameterPath(issue.path, prefix);
    const absent = issue.code === 'invalid_type' && issue.path.length > 0 && !hasPath(input, issue.path);
    if (absent) {
      missing ??= name;
      listed.push({ parameter: name, problem: 'is required' });
    } else {
      listed.push({ parameter: name, problem: issueReason(issue) });
    }
  }
  const data = { issues: listed };
  if (missing !== undefined) return missingParameter(missing, data);
  const first = listed[0] ?? { parameter: prefix || 'arguments', problem: 'is not valid' };
  return invalidParameter(first.parameter, first.problem, data);
}
