/** SQL for users, on PostgreSQL (the twin of `sqlite/user-repo.ts`). */
import { asc, eq } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { UserRepo } from '../repos.js';
import type { UserRow } from '../rows.js';
import { users } from './schema.js';

/** Reads and writes users. */
export class PgUserRepo implements UserRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async findByName(name: string): Promise<UserRow | undefined> {
    return (await this.db.select().from(users).where(eq(users.name, name)))[0];
  }

  async findById(id: string): Promise<UserRow | undefined> {
    return (await this.db.select().from(users).where(eq(users.id, id)))[0];
  }

  async insert(row: UserRow): Promise<void> {
    await this.db.insert(users).values(row);
  }

  async setPlan(id: string, plan: string): Promise<void> {
    await this.db.update(users).set({ plan }).where(eq(users.id, id));
  }

  async list(): Promise<UserRow[]> {
    return this.db.select().from(users).orderBy(asc(users.name));
  }
}
