/**
 * Takes server paths out of tool and agent output before it is posted (docs/contract.md "Tokens and
 * security": the conversation of a public project is readable by anyone). The builder's own
 * messages name service paths (`/previews/<id>/`) and are posted as they are. A project's secrets are
 * taken out of everything a build reports (docs/security.md "Project environment").
 */
import { resolve } from 'node:path';
import { redactPaths } from '../io/path-redaction.js';

/** A function that replaces the workspace, the data dir and other server paths in a text. */
export function pathRedactor(workspaceDir: string): (text: string) => string {
  const places = { dataDir: resolve(workspaceDir, '..', '..'), workspaceDir };
  return (text) => redactPaths(text, places);
}

/**
 * A function that replaces every value of `secrets` in a text with `[secret NAME]` (the longest
 * values first, so that a secret holding another is replaced whole); the identity when there are none.
 */
export function secretRedactor(secrets: Readonly<Record<string, string>>): (text: string) => string {
  const entries = Object.entries(secrets)
    .filter(([, value]) => value.length > 0)
    .sort((a, b) => b[1].length - a[1].length);
  if (entries.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const [name, value] of entries) if (out.includes(value)) out = out.split(value).join(`[secret ${name}]`);
    return out;
  };
}
