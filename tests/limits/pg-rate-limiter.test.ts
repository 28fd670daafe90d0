/**
 * The PostgreSQL request limiter on a real server (docs/postgresql.md, "Request rate limiter"):
 * two child processes (the built module, each with its own pool) hammer one key in three bursts,
 * 3, 130 and 20 requests split between them, and together allow at most the limit and at least
 * the limit less one lease per process (leases of 2 counts for 100 a minute). Then, in this process:
 * the answers the gate reads, separate keys and limits, a new window after the old one ends, and
 * the in-memory fallback when the database cannot answer.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiterPool, PgRequestRateLimiter } from '../../src/limits/pg-rate-limiter.js';
import { ROOT, waitFor } from '../helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';

/** The built module, as a node on its own loads it (the process project rebuilds dist/ when stale). */
const BUILT = pathToFileURL(join(ROOT, 'dist', 'limits', 'pg-rate-limiter.js')).href;

/**
 * A child process that counts requests on its own pool: each stdin line `{ key, limit, n }` fires
 * n concurrent `consume` calls and answers one line with how many were allowed.
 */
const CHILD = `
import { createInterface } from 'node:readline';
import { createRateLimiterPool, PgRequestRateLimiter } from ${JSON.stringify(BUILT)};
const pool = createRateLimiterPool(process.env.DB_URL);
const limiter = new PgRequestRateLimiter(pool);
await Promise.all([1, 2, 3, 4].map(() => pool.query('SELECT 1')));
process.stdout.write('ready\\n');
for await (const line of createInterface({ input: process.stdin })) {
  const { key, limit, n } = JSON.parse(line);
  const decisions = await Promise.all(Array.from({ length: n }, () => limiter.consume(key, limit, 60)));
  process.stdout.write(JSON.stringify(decisions.filter((d) => d.allowed).length) + '\\n');
}
await pool.end();
`;

/** A running child and its answers, one per burst. */
class Counter {
  private readonly lines: Interface;
  private readonly waiting: ((line: string) => void)[] = [];
  readonly ready: Promise<string>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout });
    this.ready = this.next();
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
    child.stderr.on('data', (data: Buffer) => process.stderr.write(data));
  }

  private next(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting.push(resolve);
      this.child.once('exit', (code) => reject(new Error(`counter exited with ${code}`)));
    });
  }

  /** Fires `n` concurrent requests of `key` in the child; resolves with how many it allowed. */
  async burst(key: string, limit: number, n: number): Promise<number> {
    const answer = this.next();
    this.child.stdin.write(`${JSON.stringify({ key, limit, n })}\n`);
    return Number(await answer);
  }
}

describe.skipIf(!postgresAvailable())('PgRequestRateLimiter', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  const counters: Counter[] = [];
  const pointsOf = async (key: string) =>
    (await pool.query<{ points: number }>('SELECT points FROM rate_limits WHERE key = $1', [key])).rows[0]?.points;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createRateLimiterPool(db.url);
  });
  afterAll(async () => {
    for (const counter of counters) counter.child.kill('SIGKILL');
    await pool?.end();
    await db?.drop();
  });

  it('two processes hammering one key allow at most the limit in total, and at least 98 of 100', async () => {
    for (let i = 0; i < 2; i++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
        env: { ...process.env, DB_URL: db.url },
        stdio: 'pipe',
      });
      counters.push(new Counter(child));
    }
    const [a, b] = counters as [Counter, Counter];
    await Promise.all([a.ready, b.ready]);
    const key = 'token-shared';
    const sum = (counts: number[]) => counts.reduce((x, y) => x + y, 0);
    const warmUp = sum(await Promise.all([a.burst(key, 100, 2), b.burst(key, 100, 1)]));
    const burst = sum(await Promise.all([a.burst(key, 100, 65), b.burst(key, 100, 65)]));
    const after = sum(await Promise.all([a.burst(key, 100, 10), b.burst(key, 100, 10)]));
    expect(warmUp).toBe(3);
    // Each process may hold under one lease (2 counts) unspent: at most 1 count each is lost.
    expect(warmUp + burst + after).toBeLessThanOrEqual(100);
    expect(warmUp + burst + after).toBeGreaterThanOrEqual(98);
    // The database counted leases, not requests: never more than the limit and one lease.
    const points = await pointsOf('100/60:token-shared');
    expect(points).toBeGreaterThanOrEqual(100);
    expect(points).toBeLessThanOrEqual(102);
  });

  it('alone: allows exactly the limit, counts down `remaining`, and refuses with the window end and retry-after', async () => {
    const limiter = new PgRequestRateLimiter(pool);
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(await limiter.consume('token-1', 4, 60));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([3, 2, 1, 0, 0, 0, 0]);
    expect(decisions.map((d) => d.firstRefusal)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      true,
      false,
      false,
    ]);
    const refused = decisions[4]!;
    expect(refused).toMatchObject({ limit: 4 });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(refused.resetAt).toBeGreaterThan(Date.now() / 1000);
    expect(refused.resetAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
  });

  it('a key at its limit is refused from memory: the database is not written again in that window', async () => {
    const limiter = new PgRequestRateLimiter(pool);
    for (let i = 0; i < 2; i++) expect((await limiter.consume('token-2', 2, 60)).allowed).toBe(true);
    expect(await pointsOf('2/60:token-2')).toBe(2);
    // The first refusal is the claim that found the window full (the count goes past by that claim).
    expect((await limiter.consume('token-2', 2, 60)).allowed).toBe(false);
    expect(await pointsOf('2/60:token-2')).toBe(3);
    for (let i = 0; i < 20; i++) expect((await limiter.consume('token-2', 2, 60)).allowed).toBe(false);
    expect(await pointsOf('2/60:token-2')).toBe(3);
  });

  it('claims counts in leases: 400 requests at 4 000 a minute write 4 claims of 100', async () => {
    const limiter = new PgRequestRateLimiter(pool);
    for (let i = 0; i < 400; i++) expect((await limiter.consume('token-8', 4000, 60)).allowed).toBe(true);
    expect(await pointsOf('4000/60:token-8')).toBe(400);
    expect((await limiter.consume('token-8', 4000, 60)).remaining).toBe(3599);
    expect(await pointsOf('4000/60:token-8')).toBe(500);
  });

  it('separate keys and separate limits (a plan change) count apart', async () => {
    const limiter = new PgRequestRateLimiter(pool);
    expect((await limiter.consume('token-3', 1, 60)).allowed).toBe(true);
    expect((await limiter.consume('token-3', 1, 60)).allowed).toBe(false);
    expect((await limiter.consume('token-4', 1, 60)).allowed).toBe(true);
    expect((await limiter.consume('token-3', 5, 60)).allowed).toBe(true);
  });

  it('a new window starts once the old one ends: allowed again, counted from 1, refused once more at the limit', async () => {
    const limiter = new PgRequestRateLimiter(pool);
    const first = await limiter.consume('token-5', 1, 2);
    expect(first.allowed).toBe(true);
    // The next window: refusals until then are answered from memory.
    const again = await waitFor(
      async () => {
        const decision = await limiter.consume('token-5', 1, 2);
        return decision.allowed ? decision : null;
      },
      15_000,
      'the next window',
    );
    expect(again.resetAt).toBeGreaterThan(first.resetAt);
    expect(await pointsOf('1/2:token-5')).toBe(1);
    const refused = await limiter.consume('token-5', 1, 2);
    // Refused in the new window, and reported as its first refusal (unless that window ended too).
    if (!refused.allowed) expect(refused.firstRefusal).toBe(true);
  });

  it('answers from process memory when the database is slower than the statement timeout', async () => {
    // An uncommitted row of the same key: the limiter's UPSERT waits on it until its statement times out.
    const holder = await pool.connect();
    const slow = createRateLimiterPool(db.url, { statementTimeoutMs: 200 });
    try {
      await holder.query('BEGIN');
      await holder.query('INSERT INTO rate_limits (key, points, expire) VALUES ($1, 0, $2)', [
        '3/60:token-7',
        Date.now() + 60_000,
      ]);
      const decision = await new PgRequestRateLimiter(slow).consume('token-7', 3, 60);
      expect(decision).toMatchObject({ allowed: true, remaining: 2 });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      await slow.end();
    }
    expect(await pointsOf('3/60:token-7')).toBeUndefined();
  });

  it('answers from process memory when the database cannot', async () => {
    const down = createRateLimiterPool('postgres://svc@127.0.0.1:1/none');
    try {
      const limiter = new PgRequestRateLimiter(down);
      expect((await limiter.consume('token-6', 1, 60)).allowed).toBe(true);
      expect((await limiter.consume('token-6', 1, 60)).allowed).toBe(false);
    } finally {
      await down.end();
    }
  });
});
