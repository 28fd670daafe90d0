/**
 * Takes server paths out of tool and agent output before it is posted (docs/contract.md "Tokens and
 * security": the conversation of a public project is readable by anyone). The builder's own
 * messages name service paths (`/previews/<id>/`) and are posted as they are.
 */
import { resolve } from 'node:path';
import { redactPaths } from '../io/path-redaction.js';

/** A function that replaces the workspace, the data dir and other server paths in a text. */
export function pathRedactor(workspaceDir: string): (text: string) => string {
  const places = { dataDir: resolve(workspaceDir, '..', '..'), workspaceDir };
  return (text) => redactPaths(text, places);
}
