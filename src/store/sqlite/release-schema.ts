/**
 * The `releases` table of the SQLite store (docs/releases.md), beside `schema.ts` (drizzle-kit reads
 * both: `drizzle.config.ts`).
 */
import { blob, index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { projects, workflows } from './schema.js';

/**
 * The release of each deploy and rollback workflow (docs/releases.md): its channel and rollout,
 * written when the workflow is sent; its deploy number, the channel's previous deploy, platforms,
 * SDKs, source snapshot and changes, written when it publishes its first deployment.
 */
export const releases = sqliteTable(
  'releases',
  {
    workflowId: text('workflow_id')
      .primaryKey()
      .references(() => workflows.id, { onDelete: 'cascade' }),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    channel: text('channel').notNull(),
    rolloutPercent: integer('rollout_percent').notNull(),
    rollbackOf: integer('rollback_of'), // the deploy number a rollback publishes again; null for a deploy
    number: integer('number'), // null until the workflow publishes its first deployment
    /** The channel's deploy before this one (what the changes are counted from), or null. */
    previousNumber: integer('previous_number'),
    /** JSON arrays of the platforms published and of the Expo SDKs served. */ platforms: text('platforms')
      .notNull()
      .default('[]'),
    sdks: text('sdks').notNull().default('[]'),
    /** JSON of the files changed since `previous_number` (`[{path, added, removed}]`), or null. */
    changes: text('changes'),
    /** The app's source files when it was published, gzipped JSON (`{path: text}`), or null. */
    source: blob('source', { mode: 'buffer' }),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('releases_project_number_idx').on(t.projectId, t.number),
    index('releases_project_channel_idx').on(t.projectId, t.channel, t.number),
  ],
);
