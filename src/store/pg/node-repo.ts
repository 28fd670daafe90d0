/** SQL for the nodes serving the store (docs/operators.md "One builder per deployment"), on PostgreSQL. */
import { asc, eq, gte } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { NodeRepo } from '../repos.js';
import type { NodeRow } from '../rows.js';
import { nodes } from './schema.js';

/** Reads and writes the nodes' rows. */
export class PgNodeRepo implements NodeRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async upsert(row: NodeRow): Promise<void> {
    const { runnerId: _id, ...rest } = row;
    await this.db.insert(nodes).values(row).onConflictDoUpdate({ target: nodes.runnerId, set: rest });
  }

  async remove(runnerId: string): Promise<void> {
    await this.db.delete(nodes).where(eq(nodes.runnerId, runnerId));
  }

  async listSeenSince(since: number): Promise<NodeRow[]> {
    return this.db.select().from(nodes).where(gte(nodes.seenAt, since)).orderBy(asc(nodes.seenAt));
  }
}
