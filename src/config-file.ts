/** Reading an operator's JSON config file (plans, command builder) with a zod schema. */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';

/**
 * Reads `file` as JSON and validates it.
 * @param what how errors name the file, e.g. `plans file`.
 * @throws Error `Cannot read <what> <file>: ...` or `Invalid <what> <file>: <path> <problem>`.
 */
export function readJsonConfig<S extends z.ZodType>(file: string, schema: S, what: string): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot read ${what} ${file}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid ${what} ${file}: ${issue?.path.join('.') || '(root)'} ${issue?.message ?? ''}`);
  }
  return parsed.data;
}
