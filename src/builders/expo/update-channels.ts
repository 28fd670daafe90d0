/**
 * The secret "latest" update URL of each project: `/updates/latest/<token>[/<channel>]` serves
 * what the channel serves (`latestUpdatePathOf` in core/releases.ts, docs/releases.md). The token is random (not the project id), so the URL can be
 * put into an installed app without revealing or granting anything else. The store keeps the
 * tokens (docs/postgresql.md#update-channels); the builder gets its project's token through its
 * build context, the routes resolve one through the artifact reader.
 */

/** What a reader other than the project's owner sees in place of a latest-update URL path. */
export const HIDDEN_LATEST_UPDATE_PATH = "/updates/latest/<private: shown to the project's owner>";

/**
 * `text` with every latest-update URL path (`/updates/latest/<token>`) replaced by
 * `HIDDEN_LATEST_UPDATE_PATH`: the URL installs the project's newest deploy into any app that
 * knows it, so only the owner reads it (a public project's conversation is readable by anyone).
 */
export function hideLatestUpdatePaths(text: string): string {
  return text.includes('/updates/latest/')
    ? text.replace(/\/updates\/latest\/[A-Za-z0-9_-]{32}/g, HIDDEN_LATEST_UPDATE_PATH)
    : text;
}
