/**
 * The `releases` table of the PostgreSQL store (docs/releases.md), beside `schema.ts` (drizzle-kit reads
 * both: `drizzle.pg.config.ts`).
 */
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { bytea, projects, workflows } from './schema.js';

/** The release of each deploy and rollback workflow (as in SQLite; docs/releases.md). */
export const releases = pgTable(
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
    rollbackOf: integer('rollback_of'),
    number: integer('number'),
    previousNumber: integer('previous_number'),
    platforms: text('platforms').notNull().default('[]'),
    sdks: text('sdks').notNull().default('[]'),
    changes: text('changes'),
    source: bytea('source'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('releases_project_number_idx').on(t.projectId, t.number),
    index('releases_project_channel_idx').on(t.projectId, t.channel, t.number),
  ],
);
