/**
 * Hostile input at the HTTP endpoint (), generated with fast-check: malformed
 * bodies, envelopes and tool arguments (wrong types, huge strings, deep nesting, unicode, SQL and
 * path fragments, prototype-pollution keys). Every reply must be a row of the error table with
 * its HTTP status, the server must stay up, and a refused call must change nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TABLE, httpStatusForCode, MESSAGES } from '../src/errors.js';
import { createProject, post, startTestServer, toolResult, type RawResponse, type TestServer } from './helpers.js';
import { sqliteOf } from './store-access.js';

let server: TestServer;
let alice: string;
let bob: string;
let ownProject: string;
let foreignProject: string;

const TOOLS = [
  'svc_list_projects',
  'svc_get_project',
  'svc_create_project',
  'svc_get_session',
  'svc_send_message',
  'svc_cancel_workflow',
  'svc_get_messages',
];
const PARAMS = [
  'projectId',
  'name',
  'description',
  'visibility',
  'message',
  'kind',
  'questionId',
  'workflowId',
  'after',
  'limit',
];
const NASTY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''];
const NASTY_STRINGS = [
  "'; DROP TABLE projects; --",
  '" OR 1=1 --',
  '../../../../etc/passwd',
  '..\\..\\mobile-builder.db',
  '%2e%2e%2f',
  '\u0000',
  '\uD800',
  '😀'.repeat(300),
  'x'.repeat(70_000),
  '<script>alert(1)</script>',
  '${process.exit(1)}',
  '00000000-0000-4000-8000-000000000000',
];
const KNOWN_CODES = new Set(Object.values(ERROR_TABLE).map((e) => e.code));
const EXACT_MESSAGES = new Map<number, RegExp>([
  [-32700, /^Parse error$/],
  [-32600, /^Invalid request$/],
  [-32601, /^(Method|Tool) not found: [\s\S]*$/],
  [-32602, /^(Missing required parameter: |Invalid parameter: )[\s\S]+$/],
  [-32001, new RegExp(`^${MESSAGES.unauthenticated}$`)],
  [-32003, new RegExp(`^${MESSAGES.forbidden}$`)],
  [-32004, new RegExp(`^${MESSAGES.notFound}$`)],
  [-32005, new RegExp(`^${MESSAGES.rateLimited}$`)],
]);

/** A digest of what a refused call could have changed (the engine's own progress writes are left out). */
function userState(): string {
  const db = sqliteOf(server.app.store);
  const q = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  return [
    q('select count(*) as n from projects'),
    q('select count(*) as n from workflows'),
    q("select count(*) as n from messages where role = 'user'"),
    q("select count(*) as n from workflows where status in ('cancelling', 'cancelled')"),
    q('select count(*) as n from questions where answered_at is not null'),
    q('select count(*) as n from users'),
    q('select count(*) as n from api_tokens'),
  ].join('/');
}

function checkReply(res: RawResponse): void {
  expect([200, 202, 400, 401, 403, 404, 413, 429]).toContain(res.status);
  if (res.status === 202) {
    expect(res.text).toBe('');
    return;
  }
  expect(res.json, res.text.slice(0, 200)).toBeTruthy();
  expect(res.json.jsonrpc).toBe('2.0');
  if (res.json.error) {
    const { code, message } = res.json.error;
    expect(KNOWN_CODES.has(code), `code ${code}`).toBe(true);
    expect(code, 'no internal errors').not.toBe(-32603);
    expect(res.status === 413 ? 413 : httpStatusForCode(code)).toBe(res.status);
    expect(message).toMatch(EXACT_MESSAGES.get(code)!);
  } else {
    expect(res.status).toBe(200);
    expect(res.json).toHaveProperty('result');
  }
}

async function send(body: unknown, token: string | undefined = alice): Promise<RawResponse> {
  const before = userState();
  const res = await post(server.mcpUrl, typeof body === 'string' ? body : safeStringify(body), token);
  checkReply(res);
  if (res.json?.error || res.status !== 200) expect(userState(), 'a refused call changed the store').toBe(before);
  return res;
}

/** JSON text of a value; `__proto__` keys made with fast-check survive as own properties. */
function safeStringify(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    nastyString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...NASTY_KEYS, ...PARAMS), fc.string({ maxLength: 8 })), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value;

beforeAll(async () => {
  // Steps so slow that a started workflow never writes while the fuzzer runs (the whole file's
  // budget and more).
  server = await startTestServer({ scriptedStepMs: 3_600_000 });
  alice = server.token('alice');
  bob = server.token('bob');
  ownProject = (await createProject(server.mcpUrl, alice, { name: 'Fuzz target' })).id;
  foreignProject = (await createProject(server.mcpUrl, bob, { name: 'Bob secret' })).id;
  await toolResult(server.mcpUrl, bob, 'svc_send_message', { projectId: foreignProject, message: 'build the secret' });
});
afterAll(() => server.close());

/**
 * A property's time budget, derived from its work: `runs` requests, each a few ms on a quiet
 * machine, with 200 ms each allowed (a hang guard: a machine busy with other work slows them ten
 * times and more, and only a hang should fail the test).
 */
const budget = (runs: number) => 60_000 + runs * 200;
const RAW_RUNS = 600;
const ENVELOPE_RUNS = 800;
const ARGUMENT_RUNS = 1500;

describe('fuzz: HTTP endpoint', () => {
  it(
    'raw bodies: arbitrary text and JSON values',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string({ maxLength: 200 }),
            fc.string({ unit: 'binary', maxLength: 200 }),
            fc.json(),
            fc.constantFrom('', '{', '[]', '[{}]', 'null', '"x"', '{"jsonrpc":"2.0"}'),
          ),
          async (body) => {
            await send(body);
          },
        ),
        { numRuns: RAW_RUNS },
      );
    },
    budget(RAW_RUNS),
  );

  it(
    'envelopes: every combination of jsonrpc, id, method and params',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record(
            {
              jsonrpc: fc.oneof(fc.constant('2.0'), anyValue),
              id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), anyValue),
              method: fc.oneof(
                fc.constantFrom(
                  'tools/call',
                  'tools/list',
                  'initialize',
                  'ping',
                  'notifications/initialized',
                  'resources/list',
                  'prompts/get',
                  '__proto__',
                  'constructor',
                ),
                anyValue,
              ),
              params: anyValue,
            },
            { requiredKeys: [] },
          ),
          async (envelope) => {
            await send(envelope);
          },
        ),
        { numRuns: ENVELOPE_RUNS },
      );
    },
    budget(ENVELOPE_RUNS),
  );

  it(
    "tool arguments: wrong types, huge and hostile strings, prototype keys, other users' ids",
    async () => {
      const projectIds = fc.constantFrom(
        ownProject,
        foreignProject,
        '00000000-0000-4000-8000-000000000000',
        ownProject.toUpperCase(),
      );
      const argValue = fc.oneof(
        anyValue,
        projectIds,
        fc.constantFrom('build', 'deploy', 'public', 'private'),
        fc.integer({ min: -5, max: 600 }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...TOOLS),
          fc.oneof(
            fc.dictionary(fc.oneof(fc.constantFrom(...PARAMS, ...NASTY_KEYS), fc.string({ maxLength: 6 })), argValue, {
              maxKeys: 5,
            }),
            anyValue,
          ),
          fc.constantFrom(alice, alice, alice, bob, undefined, 'svc_forged'),
          async (name, args, token) => {
            await send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }, token);
          },
        ),
        { numRuns: ARGUMENT_RUNS },
      );
    },
    budget(ARGUMENT_RUNS),
  );

  it('deep nesting, prototype pollution and a body at the cap leave the server healthy', async () => {
    const deep = `${'{"a":'.repeat(5000)}"bottom"${'}'.repeat(5000)}`;
    await send(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc_create_project","arguments":{"name":"deep","description":${deep}}}}`,
    );
    await send(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc_list_projects","arguments":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`,
    );
    await send(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc_create_project","arguments":{"name":"p","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    const near = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_create_project', arguments: { name: 'n', description: 'd'.repeat(1024 * 1024 - 200) } },
    });
    expect((await send(near)).status).toBe(400);
    expect((await fetch(`${server.http.url}/healthz`)).status).toBe(200);
    // The foreign project's data never appears in any reply to alice.
    const probe = await send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_get_messages', arguments: { projectId: foreignProject } },
    });
    expect(probe.text).not.toContain('secret');
  });
});
