/**
 * The console's event streams and a reader that stops reading (docs/console.md "Web console"): the server
 * must not keep every change in memory for it. A real HTTP server runs the console's LiveHub with
 * the engine's change notices; one client stops reading after the first bytes, another reads
 * everything. The stalled stream is dropped once its unsent bytes pass the bound; the reading one
 * stays open and gets every event.
 */
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveHub } from '../../src/console/live-updates.js';
import { silentLogger } from '../../src/logger.js';
import { ProjectChanges } from '../../src/workflows/project-changes.js';
import { waitFor } from '../helpers.js';

const EVENT_BYTES = 256 * 1024;
const changes = new ProjectChanges();
const hub = new LiveHub(changes, () => () => undefined, silentLogger(), {
  maxBufferedBytes: 512 * 1024,
  keepAliveMs: 3_600_000,
  coalesceMs: 1,
  perUser: 4,
});
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    hub.start(req, res, {
      userId: 'u',
      projectId: 'p',
      push: async (write) => {
        write('messages', { html: 'x'.repeat(EVENT_BYTES) });
        return true;
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  hub.closeAll();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function open(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => get(`${base}/events`, resolve).on('error', reject));
}

describe('a console event stream whose reader stops reading', () => {
  it('is dropped once its unsent bytes pass the bound, while a reading stream stays open', async () => {
    const stalled = await open();
    stalled.once('data', () => stalled.pause());
    stalled.on('error', () => undefined);
    let closed = false;
    stalled.socket.on('close', () => (closed = true));
    const reading = await open();
    let received = 0;
    reading.on('data', (chunk: Buffer) => (received += chunk.length));
    await waitFor(() => hub.size === 2, 10_000, 'both streams open');

    // Changes keep coming; each push writes 256 KiB to both streams.
    await waitFor(
      () => {
        changes.notify('p');
        return hub.size === 1;
      },
      120_000,
      'the stalled stream to be dropped',
    );
    expect(hub.size).toBe(1);
    // The dropped connection is closed: a reader that comes back finds it ended.
    stalled.resume();
    await waitFor(() => closed, 30_000, 'the stalled connection to close');
    // The reading stream got more than the bound and is still open.
    await waitFor(() => received > 2 * 512 * 1024, 60_000, 'the reading stream to get its events');
    expect(hub.size).toBe(1);
    reading.destroy();
    await waitFor(() => hub.size === 0, 10_000, 'the reading stream to end');
  });
});
