/** SQL for the nodes serving the store (docs/operators.md "One builder per deployment"). */
import { asc, eq, gte, sql } from 'drizzle-orm';
import type { NodeRepo } from '../repos.js';
import type { NodeRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes the nodes' rows. */
export class SqlNodeRepo implements NodeRepo {
  /** Read by every session that shows a queue (is a worker of its builder alive?): built once. */
  private readonly seenSince;

  constructor(private readonly d: Dialect) {
    this.seenSince = d.statement((db, { nodes }) =>
      db
        .select()
        .from(nodes)
        .where(gte(nodes.seenAt, sql.placeholder('since')))
        .orderBy(asc(nodes.seenAt)),
    );
  }

  async upsert(row: NodeRow): Promise<void> {
    const { nodes } = this.d.t;
    const { runnerId: _id, ...rest } = row;
    await this.d.db.insert(nodes).values(row).onConflictDoUpdate({ target: nodes.runnerId, set: rest });
  }

  async remove(runnerId: string): Promise<void> {
    const { nodes } = this.d.t;
    await this.d.db.delete(nodes).where(eq(nodes.runnerId, runnerId));
  }

  async listSeenSince(since: number): Promise<NodeRow[]> {
    return this.seenSince.all({ since });
  }
}
