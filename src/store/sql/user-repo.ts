/** SQL for users. */
import { asc, eq, sql } from 'drizzle-orm';
import type { UserRepo } from '../repos.js';
import type { UserRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes users. */
export class SqlUserRepo implements UserRepo {
  private readonly byId;

  constructor(private readonly d: Dialect) {
    this.byId = d.statement((db, { users }) =>
      db
        .select()
        .from(users)
        .where(eq(users.id, sql.placeholder('id'))),
    );
  }

  async findByName(name: string): Promise<UserRow | undefined> {
    const { users } = this.d.t;
    return (await this.d.db.select().from(users).where(eq(users.name, name)))[0];
  }

  async findById(id: string): Promise<UserRow | undefined> {
    return this.byId.get({ id });
  }

  async insert(row: UserRow): Promise<void> {
    await this.d.db.insert(this.d.t.users).values(row);
  }

  async setPlan(id: string, plan: string): Promise<void> {
    const { users } = this.d.t;
    await this.d.db.update(users).set({ plan }).where(eq(users.id, id));
  }

  async list(): Promise<UserRow[]> {
    const { users } = this.d.t;
    return this.d.db.select().from(users).orderBy(asc(users.name));
  }
}
