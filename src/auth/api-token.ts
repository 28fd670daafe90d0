/**
 * API token format and hashing (docs/contract.md#tokens-and-security): `svc_` followed by 43 base64url characters
 * (32 random bytes). Only the SHA-256 of the whole token is stored.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Every token starts with this (docs/contract.md#tokens-and-security). */
export const TOKEN_PREFIX = 'svc_';

/** A new random token, e.g. `svc_q1Xb...` (47 characters). */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** Lower-case hex SHA-256 of the token: the only form that reaches the database. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The part of a token that is safe to show in a listing: `svc_q1Xb…`. */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 4);
}

/** Longest token lifetime `--expires-in` accepts: ten years, in ms. */
export const MAX_TOKEN_LIFETIME_MS = 3650 * 86_400_000;

/**
 * Parses a duration like `30d`, `12h`, `45m`, `90s` or `2w` into milliseconds, from 1 s up to
 * ten years (an expiry date must stay a 4-digit year).
 * @throws Error when the text is not such a duration or is out of range.
 */
export function parseDuration(text: string): number {
  const match = /^(\d{1,12})\s*([smhdw])$/.exec(text.trim());
  if (!match) throw new Error(`Invalid duration "${text}": use a number and a unit s, m, h, d or w (e.g. 30d)`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 's'];
  const value = Number(match[1]) * unit;
  if (value <= 0) throw new Error(`Invalid duration "${text}": must be greater than zero`);
  if (value > MAX_TOKEN_LIFETIME_MS) throw new Error(`Invalid duration "${text}": at most 3650d (ten years)`);
  return value;
}

/** True when an expiry (ISO 8601, or null for never) has passed at `now`: compared as instants, not text. */
export function isExpired(expiresAt: string | null, now: Date): boolean {
  if (expiresAt === null) return false;
  const at = Date.parse(expiresAt);
  return Number.isNaN(at) || at <= now.getTime();
}
