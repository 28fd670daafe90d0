/** SQL for users. */
import { asc, eq } from 'drizzle-orm';
import type { Db } from './db.js';
import type { UserRepo } from '../repos.js';
import { users } from './schema.js';
import type { UserRow } from '../rows.js';

/** Reads and writes users. */
export class SqliteUserRepo implements UserRepo {
  constructor(private readonly db: Db) {}

  async findByName(name: string): Promise<UserRow | undefined> {
    return this.db.select().from(users).where(eq(users.name, name)).get();
  }

  async findById(id: string): Promise<UserRow | undefined> {
    return this.db.select().from(users).where(eq(users.id, id)).get();
  }

  async insert(row: UserRow): Promise<void> {
    this.db.insert(users).values(row).run();
  }

  async setPlan(id: string, plan: string): Promise<void> {
    this.db.update(users).set({ plan }).where(eq(users.id, id)).run();
  }

  async list(): Promise<UserRow[]> {
    return this.db.select().from(users).orderBy(asc(users.name)).all();
  }
}
