/** SQL for the nodes serving the store (docs/operators.md "One builder per deployment"). */
import { asc, eq, gte, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { NodeRepo } from '../repos.js';
import { nodes } from './schema.js';
import type { NodeRow } from '../rows.js';

/** Reads and writes the nodes' rows. */
export class SqliteNodeRepo implements NodeRepo {
  /** Read by every session that shows a queue (is a worker of its builder alive?): compiled once. */
  private readonly seenSince;

  constructor(private readonly db: Db) {
    this.seenSince = db
      .select()
      .from(nodes)
      .where(gte(nodes.seenAt, sql.placeholder('since')))
      .orderBy(asc(nodes.seenAt))
      .prepare();
  }

  async upsert(row: NodeRow): Promise<void> {
    const { runnerId: _id, ...rest } = row;
    this.db.insert(nodes).values(row).onConflictDoUpdate({ target: nodes.runnerId, set: rest }).run();
  }

  async remove(runnerId: string): Promise<void> {
    this.db.delete(nodes).where(eq(nodes.runnerId, runnerId)).run();
  }

  async listSeenSince(since: number): Promise<NodeRow[]> {
    return this.seenSince.all({ since });
  }
}
