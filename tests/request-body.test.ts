/**
 * The one reader of request bodies (src/io/request-body.ts) on a real node:http server: a body
 * received whole with its headers is the text itself, not a promise; one still streaming in is a
 * promise of it; a body over the limit (declared, or counted as it arrives) and a request that
 * ends early are told apart.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { BODY_ABORTED, BODY_TOO_LARGE, readBody, type BodyText } from '../src/io/request-body.js';

let server: Server | undefined;
afterEach(() => server?.close());

/** Outcome of the first request's `readBody`, and whether it was the value itself (not a promise). */
interface Outcome {
  value: BodyText;
  atOnce: boolean;
}

/**
 * A server whose requests are read with `readBody` (limit 100 bytes) once the turn they arrived in
 * ends, as the /mcp route reads them: `started` resolves once the first one's read began, `outcome`
 * with its result.
 */
async function firstRead(): Promise<{ port: number; started: Promise<void>; outcome: Promise<Outcome> }> {
  let begun!: () => void;
  const started = new Promise<void>((resolve) => (begun = resolve));
  let settle!: (outcome: Outcome) => void;
  const outcome = new Promise<Outcome>((resolve) => (settle = resolve));
  server = createServer((req: IncomingMessage, res) => {
    setImmediate(() => {
      const read = readBody(req, 100);
      begun();
      void Promise.resolve(read).then((value) => {
        settle({ value, atOnce: !(read instanceof Promise) });
        res.end('ok');
      });
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, started, outcome };
}

/** A connection to `port` with `first` written; `then` is written once `after` resolved (or the connection closed, with `end`). */
function send(port: number, first: string, after?: Promise<void>, then?: string, { end = false } = {}) {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.on('connect', () => socket.write(first));
  void after?.then(() => (end ? socket.destroy() : socket.write(then ?? '')));
  return socket;
}

const head = (length: number) => `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n`;

it('a body received whole with its headers is the text at once', async () => {
  const { port, outcome } = await firstRead();
  const socket = send(port, `${head(11)}hello world`);
  await expect(outcome).resolves.toEqual({ value: 'hello world', atOnce: true });
  socket.destroy();
});

it('a body still streaming in is a promise of the whole text', async () => {
  const { port, started, outcome } = await firstRead();
  const socket = send(port, `${head(11)}hello`, started, ' world');
  await expect(outcome).resolves.toEqual({ value: 'hello world', atOnce: false });
  socket.destroy();
});

it('a declared length over the limit is refused at once; a body that grows past it, as it arrives', async () => {
  const declared = await firstRead();
  let socket = send(declared.port, head(101));
  await expect(declared.outcome).resolves.toEqual({ value: BODY_TOO_LARGE, atOnce: true });
  socket.destroy();
  server!.close();

  const counted = await firstRead();
  socket = send(
    counted.port,
    `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n${'x'.repeat(16)}\r\n`,
    counted.started,
    `64\r\n${'y'.repeat(100)}\r\n`,
  );
  await expect(counted.outcome).resolves.toEqual({ value: BODY_TOO_LARGE, atOnce: false });
  socket.destroy();
});

it('a request whose client goes away before its body ends is aborted', async () => {
  const { port, started, outcome } = await firstRead();
  send(port, `${head(11)}hello`, started, undefined, { end: true });
  await expect(outcome).resolves.toEqual({ value: BODY_ABORTED, atOnce: false });
});
