/**
 * One-time login codes (docs/security.md "Sign in with OAuth"): `mobile-builder-mcp login-code --user NAME`
 * prints one, and a person types it on the consent page (or the console's sign-in) instead of
 * pasting an API token. A code is 25 characters of Crockford base32 in groups of five
 * (`7KQ2M-...`, 125 random bits), single use, 10 minutes by default, stored as SHA-256 only.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { LoginCodeRepo } from '../store/repos.js';
import type { UserRepo } from '../store/repos.js';
import { hashToken } from './api-token.js';

/** Lifetime of a login code when none is given: 10 minutes, in seconds. */
const DEFAULT_LOGIN_CODE_TTL_SECONDS = 600;
/** Longest lifetime a login code may have: one day, in seconds. */
const MAX_LOGIN_CODE_TTL_SECONDS = 86_400;

/** Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or retyped stays unambiguous. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUPS = 5;
const GROUP_LENGTH = 5;

/** Thrown by `create` for a user name that does not exist. */
class UnknownUserError extends Error {
  constructor(readonly userName: string) {
    super(`No user "${userName}". Create one with: mobile-builder-mcp token create --user ${userName}`);
  }
}

/** The canonical form of a typed code: upper case, no separators, Crockford's look-alikes mapped. */
function normalise(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
}

/** Issues and redeems one-time login codes. */
export class LoginCodeService {
  constructor(
    private readonly users: UserRepo,
    private readonly codes: LoginCodeRepo,
    private readonly clock: Clock,
  ) {}

  /**
   * Issues a code for the existing user `userName`, valid for `ttlSeconds` (default 600). The
   * returned code is the only time it exists outside the store's hash.
   * @throws UnknownUserError when there is no such user; RangeError for a lifetime outside 1 s .. 1 day.
   */
  async create(userName: string, ttlSeconds: number = DEFAULT_LOGIN_CODE_TTL_SECONDS): Promise<string> {
    if (!(Number.isSafeInteger(ttlSeconds) && ttlSeconds > 0 && ttlSeconds <= MAX_LOGIN_CODE_TTL_SECONDS)) {
      throw new RangeError(`A login code lifetime must be between 1 s and ${MAX_LOGIN_CODE_TTL_SECONDS} s (one day)`);
    }
    const user = await this.users.findByName(userName);
    if (!user) throw new UnknownUserError(userName);
    const bytes = randomBytes(GROUPS * GROUP_LENGTH);
    const chars = Array.from(bytes, (b) => ALPHABET[b & 31]!).join('');
    const code = Array.from({ length: GROUPS }, (_, i) => chars.slice(i * GROUP_LENGTH, (i + 1) * GROUP_LENGTH)).join(
      '-',
    );
    const now = this.clock();
    await this.codes.insert({
      codeHash: hashToken(normalise(code)),
      userId: user.id,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      usedAt: null,
    });
    return code;
  }

  /** Redeems (consumes) a code: its user, or null for a code that is unknown, used or expired. */
  async redeem(code: string): Promise<{ userId: string; userName: string } | null> {
    const canonical = normalise(code);
    if (canonical.length !== GROUPS * GROUP_LENGTH || ![...canonical].every((c) => ALPHABET.includes(c))) return null;
    const user = await this.codes.consume(hashToken(canonical), this.clock().toISOString());
    return user ? { userId: user.id, userName: user.name } : null;
  }
}
