/**
 * The early start of a plain stdio `serve` (docs/performance.md "Start-up time"): its answer to a first
 * `initialize` is byte for byte the gateway's (the SDK `Server`'s), it answers nothing the SDK
 * might refuse, it takes only command lines commander accepts as a stdio `serve`, and it hands
 * the stdio transport every byte after the first line, in order.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Command } from 'commander';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGateway, VERSION } from '../src/app.js';
import { buildProgram } from '../src/cli/main.js';
import { isPlainStdioServe, SETTING_VARIABLES, startStdioEarly } from '../src/cli/early-stdio-start.js';
import { SETTINGS } from '../src/config/settings.js';
import type { ServeOptions } from '../src/config/serve-options.js';
import { createLogger } from '../src/logger.js';
import { earlyInitializeReply, INITIALIZE_PROTOCOL_VERSIONS } from '../src/mcp/early-initialize.js';
import { readFirstLine } from '../src/transports/stdio-first-line.js';

const initialize = (params: Record<string, unknown>, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params,
});
const plainParams = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'host', version: '1.0' } };

/** Initialize requests the early start answers. */
const ANSWERED = [
  initialize(plainParams),
  initialize(plainParams, 'a-string-id'),
  initialize(plainParams, -7),
  ...[...SUPPORTED_PROTOCOL_VERSIONS, '2026-07-28', '1999-01-01', ''].map((protocolVersion) =>
    initialize({ ...plainParams, protocolVersion }),
  ),
  initialize({ ...plainParams, clientInfo: { name: 'claude-code', title: 'Claude Code', version: '2.0.1' } }),
  initialize({
    ...plainParams,
    capabilities: {
      roots: { listChanged: true },
      sampling: { context: {}, tools: {} },
      elicitation: { form: { applyDefaults: true }, url: {} },
      experimental: { anything: { deep: { deeper: {} } } },
      tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} } } },
      somethingNew: {},
    },
  }),
  initialize({ ...plainParams, capabilities: { elicitation: {} } }),
];

/** Messages it leaves to the gateway (some the SDK refuses, some it accepts in ways not worth copying). */
const LEFT = [
  'not json',
  '[]',
  JSON.stringify({ ...initialize(plainParams), jsonrpc: '1.0' }),
  JSON.stringify(initialize(plainParams, 1.5)),
  JSON.stringify(initialize(plainParams, null)),
  JSON.stringify({ jsonrpc: '2.0', method: 'initialize', params: plainParams }),
  JSON.stringify({ ...initialize(plainParams), extra: true }),
  JSON.stringify(initialize({ ...plainParams, _meta: { progressToken: 1 } })),
  JSON.stringify(initialize({ ...plainParams, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } })),
  JSON.stringify(initialize({ ...plainParams, protocolVersion: 20250618 })),
  JSON.stringify(initialize({ ...plainParams, capabilities: { roots: { listChanged: 'yes' } } })),
  JSON.stringify(initialize({ ...plainParams, capabilities: { roots: { listChanged: {} } } })),
  JSON.stringify(initialize({ ...plainParams, capabilities: { elicitation: { form: { applyDefaults: {} } } } })),
  JSON.stringify(initialize({ ...plainParams, capabilities: { experimental: { listChanged: true } } })),
  JSON.stringify(initialize({ ...plainParams, capabilities: { sampling: [] } })),
  JSON.stringify(initialize({ ...plainParams, capabilities: { tasks: { list: 5 } } })),
  JSON.stringify(initialize({ ...plainParams, capabilities: undefined })),
  JSON.stringify(initialize({ ...plainParams, clientInfo: { name: 'host' } })),
  JSON.stringify(initialize({ ...plainParams, clientInfo: { name: 'host', version: '1', icons: [{ src: 'x.png' }] } })),
  JSON.stringify(initialize({ ...plainParams, clientInfo: { name: 'host', version: '1', title: 3 } })),
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
];

describe('the early answer to initialize', () => {
  it('negotiates the protocol versions the SDK Server does', () => {
    expect(INITIALIZE_PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
  });

  it("is byte for byte the gateway's answer, for every message it answers, and leaves the others to the gateway", async () => {
    const gateway = await createGateway({ logger: createLogger('silent') });
    try {
      const admit = async () => null;
      for (const message of ANSWERED) {
        const line = JSON.stringify(message);
        const early = earlyInitializeReply(line, VERSION);
        expect(early, line).not.toBeNull();
        const reply = await gateway.handleText(line, admit);
        expect(early, line).toBe(JSON.stringify(reply.body));
      }
      for (const line of LEFT) expect(earlyInitializeReply(line, VERSION), line).toBeNull();
    } finally {
      await gateway.close();
    }
  });
});

/** The options commander's real program gives `serve` for `argv` (its action replaced), or what it threw. */
async function serveOptionsOf(argv: string[]): Promise<ServeOptions | Error> {
  const program = buildProgram();
  let parsed: ServeOptions | undefined;
  const quiet = (command: Command) => {
    command.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    command.commands.forEach(quiet);
  };
  quiet(program);
  program.commands.find((c) => c.name() === 'serve')!.action(async (options: ServeOptions) => void (parsed = options));
  try {
    await program.parseAsync(argv, { from: 'node' });
  } catch (error) {
    return error as Error;
  }
  return parsed ?? new Error('no command ran');
}

describe('which command lines start early', () => {
  afterEach(() => vi.unstubAllEnvs());

  const node = ['node', 'mobile-builder-mcp'];
  const PLAIN: Array<[string[], Record<string, string>]> = [
    [['serve'], {}],
    [['serve', '--data-dir', '/tmp/x', '--port', '0', '--builder', 'scripted', '--log-level', 'warn'], {}],
    [
      ['serve', '--data-dir=/tmp/x', '--port=3333', '--builder=expo', '--no-build-sandbox', '--scripted-step-ms', '10'],
      {},
    ],
    [
      ['serve'],
      {
        SVC_API_TOKEN: 'svc_whatever',
        SVC_DATA_DIR: '/tmp/y',
        SVC_LOG_LEVEL: 'silent',
        SVC_PORT: '0',
        SVC_BUILDER: 'scripted',
      },
    ],
  ];
  const NOT_PLAIN: Array<[string[], Record<string, string>]> = [
    [[], {}],
    [['worker'], {}],
    [['serve', '--http'], {}],
    [['serve'], { SVC_HTTP: '1' }],
    [['serve', '--role', 'worker'], {}],
    [['serve', '--body-limit', '10'], {}],
    [['serve'], { SVC_BODY_LIMIT: '10' }],
    [['serve'], { SVC_TRUST_PROXY: 'loopback' }],
    [['serve'], { SVC_DATA_DIR: '' }],
    [['serve', '--port', 'abc'], {}],
    [['serve', '--port', '-1'], {}],
    [['serve'], { SVC_PORT: 'abc' }],
    [['serve', '--log-level', 'loud'], {}],
    [['serve', '--builder', 'command'], {}],
    [['serve', '--data-dir'], {}],
    [['serve', '--data-dir', '--port'], {}],
    [['serve', '--help'], {}],
    [['serve', 'extra'], {}],
    [['serve', '--'], {}],
    [['--version'], {}],
  ];

  it('knows every variable of the settings table (it cannot import the table: commander)', () => {
    expect([...SETTING_VARIABLES].sort()).toEqual(
      [...new Set(Object.values(SETTINGS).flatMap((s: { env?: string }) => (s.env ? [s.env] : [])))].sort(),
    );
  });

  it('takes only a stdio serve that commander accepts, with the same settings', async () => {
    for (const [args, env] of PLAIN) {
      for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
      expect(isPlainStdioServe([...node, ...args], { ...process.env }), args.join(' ')).toBe(true);
      expect(
        isPlainStdioServe([...node, ...args], { ...env, SVC_STRICT_TRANSACTIONS: '1', PATH: '/bin' }),
        args.join(' '),
      ).toBe(true);
      const options = await serveOptionsOf([...node, ...args]);
      expect(options, args.join(' ')).not.toBeInstanceOf(Error);
      expect(options).toMatchObject({ role: 'all', bodyLimit: 1024 * 1024 });
      expect((options as ServeOptions).http).toBeFalsy();
      vi.unstubAllEnvs();
    }
  });

  it('leaves every other command line to the main bundle', () => {
    for (const [args, env] of NOT_PLAIN)
      expect(
        isPlainStdioServe([...node, ...args], { PATH: '/bin', ...env }),
        `${args.join(' ')} ${JSON.stringify(env)}`,
      ).toBe(false);
  });

  it('reads nothing for a command line that is not plain', () => {
    const input = new PassThrough();
    input.write('{"jsonrpc":"2.0"}\n');
    expect(
      startStdioEarly(['node', 'bin', 'serve', '--http'], {}, { input, output: new PassThrough() }),
    ).toBeUndefined();
    expect(input.read()?.toString()).toBe('{"jsonrpc":"2.0"}\n');
  });
});

/** Everything `stream` carries until it ends. */
async function drain(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

describe('the hand-over to the stdio transport', () => {
  it('answers a first initialize and hands over every later byte in order, those that came with it and after it', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const first = JSON.stringify(initialize(plainParams));
    input.write(`${first}\r\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,`);
    const started = startStdioEarly(['node', 'bin', 'serve'], {}, { input, output })!;
    const handed = await started;
    expect(handed.answered).toEqual({ line: first, reply: earlyInitializeReply(first, VERSION) });
    expect(output.read()?.toString()).toBe(`${handed.answered!.reply}\n`);
    input.end('"method":"tools/list"}\n');
    expect(await drain(handed.input)).toBe(
      '{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n',
    );
  });

  it('hands over the whole input, unanswered, when the first line is not a plain initialize', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const text = '{"jsonrpc":"2.0","id":7,"method":"tools/list"}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\n';
    input.end(text);
    const handed = await startStdioEarly(['node', 'bin', 'serve'], {}, { input, output })!;
    expect(handed.answered).toBeUndefined();
    expect(output.read()).toBeNull();
    expect(await drain(handed.input)).toBe(text);
  });

  it('hands over input that ends without a newline, or whose first line is longer than the limit, unread', async () => {
    const ended = new PassThrough();
    ended.end('{"jsonrpc":');
    const cut = await readFirstLine(ended, 100, () => true);
    expect(cut.taken).toBeUndefined();
    expect(await drain(cut.rest)).toBe('{"jsonrpc":');

    const long = new PassThrough();
    const line = `${'x'.repeat(150)}\nnext\n`;
    long.write(line.slice(0, 60));
    const pending = readFirstLine(long, 100, () => true);
    long.end(line.slice(60));
    const over = await pending;
    expect(over.taken).toBeUndefined();
    expect(await drain(over.rest)).toBe(line);
  });

  it('ends the handed-over input when the input fails or closes without an end, as at the end of input', async () => {
    const failing = new PassThrough();
    failing.write('first\nsecond\n');
    const handed = await readFirstLine(failing, 100, () => true);
    expect(handed.taken).toBe('first');
    const read = drain(handed.rest);
    failing.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(await read).toBe('second\n');

    const closing = new PassThrough();
    closing.write('first\nthird\n');
    const closed = await readFirstLine(closing, 100, () => true);
    const rest = drain(closed.rest);
    closing.destroy();
    expect(await rest).toBe('third\n');
  });
});
