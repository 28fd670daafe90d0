/**
 * The request limiter counted in the store (docs/contract.md "Limits and plans"): two connections to one
 * database file (as two processes have) share one window; counts are claimed in leases; a key
 * refused in its window is refused from memory without writing; the memory limiter answers when
 * the store cannot; a key's requests are decided in the order they arrive, also while a claim waits.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreRequestRateLimiter } from '../src/limits/store-rate-limiter.js';
import { openStore, type RateWindows } from '../src/store/store.js';
import { sqliteOf } from './store-access.js';
import { tempDir } from './helpers.js';

const dir = tempDir();
const file = join(dir, 'mobile-builder.db');
const a = await openStore({ file });
const b = await openStore({ file });
afterAll(() => {
  void a.close();
  void b.close();
  rmSync(dir, { recursive: true, force: true });
});

const pointsOf = (key: string) =>
  (sqliteOf(a).prepare('select points from rate_limits where key = ?').get(key) as { points: number } | undefined)
    ?.points;

describe('StoreRequestRateLimiter', () => {
  it('two connections share one window: exactly the limit is allowed in total', async () => {
    const [first, second] = [new StoreRequestRateLimiter(a.rateWindows!), new StoreRequestRateLimiter(b.rateWindows!)];
    const decisions = [];
    for (let i = 0; i < 10; i++) decisions.push(await (i % 2 ? first : second).consume('token-1', 4, 60));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false, false, false, false, false, false]);
    expect(decisions.map((d) => d.remaining).slice(0, 5)).toEqual([3, 2, 1, 0, 0]);
    const refused = decisions[4]!;
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.resetAt).toBeGreaterThan(Date.now() / 1000);
    expect(refused.firstRefusal).toBe(true);
  });

  it('a request decided from a lease in memory gets the decision itself, not a promise; a claim is a promise', async () => {
    const limiter = new StoreRequestRateLimiter(a.rateWindows!);
    const first = limiter.consume('token-sync', 64, 60);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).remaining).toBe(63);
    // The claim's line of waiting requests is let go once it settled (a few microtasks on).
    await new Promise((resolve) => setImmediate(resolve));
    const second = limiter.consume('token-sync', 64, 60);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toMatchObject({ allowed: true, remaining: 62 });
  });

  it('a refused key is answered from memory: the store is not written again in that window', async () => {
    const limiter = new StoreRequestRateLimiter(a.rateWindows!);
    for (let i = 0; i < 3; i++) await limiter.consume('token-2', 2, 60);
    expect(pointsOf('2/60:token-2')).toBe(3);
    for (let i = 0; i < 50; i++) expect((await limiter.consume('token-2', 2, 60)).allowed).toBe(false);
    expect(pointsOf('2/60:token-2')).toBe(3);
  });

  it('claims counts in leases (1/16 of the limit) and spends them from memory; alone it allows exactly the limit', async () => {
    const limiter = new StoreRequestRateLimiter(a.rateWindows!);
    const decisions = [];
    for (let i = 0; i < 25; i++) decisions.push(await limiter.consume('token-5', 160, 60));
    expect(pointsOf('160/60:token-5')).toBe(30);
    expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 25 }, (_, i) => 159 - i));
    let allowed = 25;
    for (let i = 0; i < 200; i++) if ((await limiter.consume('token-5', 160, 60)).allowed) allowed++;
    expect(allowed).toBe(160);
  });

  it('two connections with leases never allow more than the limit together', async () => {
    const [first, second] = [new StoreRequestRateLimiter(a.rateWindows!), new StoreRequestRateLimiter(b.rateWindows!)];
    let allowed = 0;
    for (let i = 0; i < 400; i++) if ((await (i % 2 ? first : second).consume('token-6', 160, 60)).allowed) allowed++;
    expect(allowed).toBe(160);
  });

  it('a different limit (a plan change) counts in its own window', async () => {
    const limiter = new StoreRequestRateLimiter(a.rateWindows!);
    expect((await limiter.consume('token-3', 1, 60)).allowed).toBe(true);
    expect((await limiter.consume('token-3', 1, 60)).allowed).toBe(false);
    expect((await limiter.consume('token-3', 5, 60)).allowed).toBe(true);
  });

  it('falls back to process memory when the store cannot answer', async () => {
    const own = await openStore({ file: join(dir, 'closed.db') });
    const limiter = new StoreRequestRateLimiter(own.rateWindows!);
    await own.close();
    expect((await limiter.consume('token-4', 1, 60)).allowed).toBe(true);
    expect((await limiter.consume('token-4', 1, 60)).allowed).toBe(false);
  });

  it("decides a key's requests in the order they arrive, also when one comes while a claim is answered", async () => {
    // The first claim waits for the store (as behind a repository call holding the SQLite mutex,
    // or a PostgreSQL round trip); the third request comes 0 to 40 microtask turns after the
    // store answers, so one of them lands between the lease arriving and the first request taking it.
    const store = a.rateWindows!;
    for (let turns = 0; turns <= 40; turns++) {
      let answer!: () => void;
      const held = new Promise<void>((resolve) => (answer = resolve));
      const windows: RateWindows = {
        claim: async (claim) => {
          await held;
          return store.claim(claim);
        },
        deleteExpired: (before) => store.deleteExpired(before),
      };
      const limiter = new StoreRequestRateLimiter(windows);
      const key = `order-${turns}`;
      const first = limiter.consume(key, 2, 60);
      const second = limiter.consume(key, 2, 60);
      answer();
      for (let i = 0; i < turns; i++) await Promise.resolve();
      const third = limiter.consume(key, 2, 60);
      const decisions = await Promise.all([first, second, third]);
      expect({ turns, allowed: decisions.map((d) => d.allowed) }).toEqual({ turns, allowed: [true, true, false] });
    }
  });
});
