/**
 * Keeps server paths out of what users read (docs/contract.md#tokens-and-security): failure messages and
 * build output are stored in a project's conversation, which anyone may read on a public project.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';

/** Absolute paths that start a word (not the path part of a URL such as `https://host/a`). */
const ABSOLUTE_PATH = /(^|[\s'"`(=,[])(\/(?:[^\s'"`()<>,[\]]+))/g;

/**
 * `text` with server paths replaced: the workspace by `<workspace>`, the data dir by `<data-dir>`,
 * the home folder by `~`, and any other absolute path by `…/` and its last part.
 */
export function redactPaths(text: string, places: { dataDir: string; workspaceDir?: string }): string {
  if (!text.includes('/')) return text;
  let out = text;
  const named: [string, string][] = [];
  if (places.workspaceDir) named.push([resolve(places.workspaceDir), '<workspace>']);
  named.push([resolve(places.dataDir), '<data-dir>'], [homedir(), '~']);
  for (const [path, label] of named) if (path.length > 1) out = out.split(path).join(label);
  return out.replace(
    ABSOLUTE_PATH,
    (_match, lead: string, path: string) => `${lead}…/${path.split('/').filter(Boolean).pop() ?? ''}`,
  );
}
