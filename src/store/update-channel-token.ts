/**
 * The secret of a project's Expo "latest" update URL (`/updates/latest/<token>`,
 * docs/postgresql.md#update-channels): random, not derived from the project id, so the URL can be
 * put into an installed app without revealing or granting anything else.
 */
import { randomBytes } from 'node:crypto';

/** The shape of a token: 32 URL-safe base64 characters (24 random bytes). */
export const UPDATE_CHANNEL_TOKEN = /^[A-Za-z0-9_-]{32}$/;

/** A new random token (24 bytes, URL-safe base64). */
export function newUpdateChannelToken(): string {
  return randomBytes(24).toString('base64url');
}
