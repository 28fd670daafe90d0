/**
 * The secret "latest" update URL of each project: `/updates/latest/<token>` always serves the
 * project's newest native deployment. The token is random (not the project id), so the URL can be
 * put into an installed app without revealing or granting anything else. Tokens live in files
 * under `<dataDir>/expo-updates/channels/` (one file per token, naming the project, and one per
 * project, naming its token), so several server processes sharing a data dir agree.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const PROJECT_ID = /^[0-9a-f-]{36}$/;

/** Project <-> token files (see the file comment). */
export class UpdateChannels {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'expo-updates', 'channels');
  }

  /** The project's token, created on first use. */
  tokenOf(projectId: string): string {
    if (!PROJECT_ID.test(projectId)) throw new Error('Invalid project id');
    const existing = this.read(join(this.dir, `project-${projectId}`));
    if (existing && TOKEN.test(existing)) return existing;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const token = randomBytes(24).toString('base64url');
    this.write(join(this.dir, `token-${token}`), projectId);
    this.write(join(this.dir, `project-${projectId}`), token);
    // Two processes racing: the project file that won names the token both use.
    return this.read(join(this.dir, `project-${projectId}`)) ?? token;
  }

  /** The project a token belongs to, or null. */
  projectOf(token: string): string | null {
    if (!TOKEN.test(token)) return null;
    const projectId = this.read(join(this.dir, `token-${token}`));
    return projectId && PROJECT_ID.test(projectId) ? projectId : null;
  }

  private read(file: string): string | null {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return null;
    }
  }

  private write(file: string, content: string): void {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, content, { mode: 0o600 });
    renameSync(tmp, file);
  }
}

/** The service-relative path of a project's latest-update URL. */
export function latestUpdatePath(token: string): string {
  return `/updates/latest/${token}`;
}

/** What a reader other than the project's owner sees in place of a latest-update URL path. */
export const HIDDEN_LATEST_UPDATE_PATH = '/updates/latest/<private: shown to the project\'s owner>';

/**
 * `text` with every latest-update URL path (`/updates/latest/<token>`) replaced by
 * `HIDDEN_LATEST_UPDATE_PATH`: the URL installs the project's newest deploy into any app that
 * knows it, so only the owner reads it (a public project's conversation is readable by anyone).
 */
export function hideLatestUpdatePaths(text: string): string {
  return text.includes('/updates/latest/') ? text.replace(/\/updates\/latest\/[A-Za-z0-9_-]{32}/g, HIDDEN_LATEST_UPDATE_PATH) : text;
}
