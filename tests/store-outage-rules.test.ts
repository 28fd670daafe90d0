/**
 * The small rules behind surviving a database outage (docs/operators.md, "When PostgreSQL
 * restarts"): which failures mean "the store cannot answer now", how they are answered, and the
 * reaper's wait of a full lease after an outage. The whole behaviour, with real processes and a
 * real PostgreSQL restart, is tests/multinode/database-restart.test.ts.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { notFound, toJsonRpcError, unexpectedFailureStatus } from '../src/errors.js';
import { isStoreUnavailable, storeUnavailableReason } from '../src/store/unavailable.js';
import { ReapGate } from '../src/workflows/reap-gate.js';

/** An error as drizzle throws it: its own message, the driver's error as `cause`. */
function wrapped(cause: unknown): Error {
  return new Error('Failed query: select 1\nparams: ', { cause });
}

describe('isStoreUnavailable', () => {
  it('knows an outage by SQLSTATE, socket code or the driver message, also under a cause', () => {
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
      severity: 'FATAL',
    });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const error of [
      shutdown,
      refused,
      new Error('Connection terminated unexpectedly'),
      new Error('Query read timeout'),
      new Error('timeout exceeded when trying to connect'),
      Object.assign(new Error('x'), { code: '08006' }),
    ]) {
      expect(isStoreUnavailable(error), String(error)).toBe(true);
      expect(isStoreUnavailable(wrapped(error)), `wrapped ${String(error)}`).toBe(true);
    }
  });

  it('does not take a wrong statement, a lock held elsewhere or a unique violation for an outage', () => {
    for (const code of ['42P01', '55P03', '23505', '40001'])
      expect(isStoreUnavailable(wrapped(Object.assign(new Error(code), { code }))), code).toBe(false);
    expect(isStoreUnavailable(new Error('boom'))).toBe(false);
    expect(isStoreUnavailable(undefined)).toBe(false);
  });

  it("names an outage by the driver's words only, never the SQL or its parameters", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const error = Object.assign(wrapped(refused), { query: 'select secret', params: ['svc_token'] });
    expect(storeUnavailableReason(error)).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    expect(storeUnavailableReason(new Error('boom'))).toBeUndefined();
  });

  it("recognises node-postgres's own failure on a server that is not there", async () => {
    const client = new pg.Client({
      connectionString: 'postgres://svc@127.0.0.1:1/none',
      connectionTimeoutMillis: 2000,
    });
    client.on('error', () => undefined);
    const error = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isStoreUnavailable(error)).toBe(true);
  });
});

describe('answers during an outage', () => {
  it('a tool call: -32603 with data {reason: store_unavailable, retryable: true}; an HTTP route: 503 with Retry-After', () => {
    const outage = wrapped(new Error('Connection terminated unexpectedly'));
    expect(toJsonRpcError(outage)).toEqual({
      code: -32603,
      message: 'Internal error',
      data: { reason: 'store_unavailable', retryable: true },
    });
    expect(unexpectedFailureStatus(outage)).toEqual({ status: 503, retryAfterSeconds: 1 });
    expect(toJsonRpcError(new Error('boom'))).toEqual({ code: -32603, message: 'Internal error' });
    expect(unexpectedFailureStatus(new Error('boom'))).toEqual({ status: 500 });
    expect(toJsonRpcError(notFound({ resource: 'project', reason: 'unknown id' })).code).toBe(-32004);
  });
});

describe('ReapGate', () => {
  it('takes over at once while the store is steady', () => {
    const gate = new ReapGate(1000, () => 0);
    expect(gate.mayTakeOver()).toBe(true);
  });

  it('after a failure, waits a full lease from the first read that succeeds', () => {
    let now = 0;
    const gate = new ReapGate(1000, () => now);
    gate.storeFailed();
    now = 5000; // down for a long time: nothing is counted while it is
    expect(gate.mayTakeOver()).toBe(false);
    expect(gate.waitMs()).toBe(1000);
    now = 5999;
    expect(gate.mayTakeOver()).toBe(false);
    now = 6000;
    expect(gate.mayTakeOver()).toBe(true);
  });

  it('a reconnect of the change-notice connection also starts a lease of waiting', () => {
    let now = 100;
    const gate = new ReapGate(1000, () => now);
    gate.reconnected();
    expect(gate.mayTakeOver()).toBe(false);
    now = 1100;
    expect(gate.mayTakeOver()).toBe(true);
  });
});
