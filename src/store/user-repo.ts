/** SQL for users. */
import { asc, eq } from 'drizzle-orm';
import type { Db } from './database.js';
import { users, type UserRow } from './schema.js';

/** Reads and writes users. */
export class UserRepo {
  constructor(private readonly db: Db) {}

  findByName(name: string): UserRow | undefined {
    return this.db.select().from(users).where(eq(users.name, name)).get();
  }

  findById(id: string): UserRow | undefined {
    return this.db.select().from(users).where(eq(users.id, id)).get();
  }

  insert(row: UserRow): void {
    this.db.insert(users).values(row).run();
  }

  setPlan(id: string, plan: string): void {
    this.db.update(users).set({ plan }).where(eq(users.id, id)).run();
  }

  list(): UserRow[] {
    return this.db.select().from(users).orderBy(asc(users.name)).all();
  }
}
