/**
 * `--database-url` and `--database-listen-url` (docs/cli.md#command-line): a PostgreSQL connection
 * string, `postgres://` or `postgresql://` (the forms libpq and node-postgres accept). Such a URL
 * usually holds a password, so neither a refusal nor a start-up line ever prints it.
 */
import { UsageError } from './usage-error.js';

const SCHEMES = new Set(['postgres:', 'postgresql:']);

/**
 * A parser of a PostgreSQL URL for `flag` (whose variable is `env`). An empty value (a variable
 * set to nothing, as compose files often leave it) means unset. `unset` says what unset means, for
 * the refusal's last sentence.
 * @returns a parser that returns the URL unchanged, or undefined for an empty value.
 * @throws UsageError (exit code 2) naming the flag and the variable, and only the scheme of the
 *   value, never the value itself (it may hold a password).
 */
export function postgresUrl(flag: string, env: string, unset: string): (value: string) => string | undefined {
  return (value: string): string | undefined => {
    const text = value.trim();
    if (text === '') return undefined;
    let scheme: string | null = null;
    try {
      scheme = new URL(text).protocol;
    } catch {
      // Not a URL: said so below, without echoing it.
    }
    if (scheme !== null && SCHEMES.has(scheme)) return text;
    const got = scheme === null ? 'a value that is not a URL' : `a ${scheme.slice(0, 20)}// URL`;
    throw new UsageError(
      `${flag} (${env}) must be a PostgreSQL URL, postgres://USER:PASSWORD@HOST:5432/DATABASE or postgresql://…; got ${got}. ` +
        `Leave it unset to ${unset}.`,
    );
  };
}

/**
 * `url` as it may be shown: its password (in the user part or a `password` query parameter)
 * replaced by `***`. A value that does not parse is shown as `(a database URL)`.
 */
export function redactedDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return '(a database URL)';
  }
}
