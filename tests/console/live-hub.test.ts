/**
 * The console's event stream hub on a real HTTP server: a stream whose browser went away before
 * the stream started (while its access check was still running) is given back at once, so that
 * such streams never pile up against the per-user bound or keep their change subscriptions.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveHub } from '../../src/console/live-updates.js';
import { silentLogger } from '../../src/logger.js';
import { ProjectChanges } from '../../src/workflows/project-changes.js';
import { waitFor } from '../helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('LiveHub', () => {
  it('gives back a stream whose connection closed before it started', async () => {
    const changes = new ProjectChanges();
    const hub = new LiveHub(changes, () => () => undefined, silentLogger());
    const stream = { userId: 'u1', projectId: 'p1', push: async () => true };
    // The request is held (as the console's access check holds it) until its client has gone.
    let held: { req: IncomingMessage; res: ServerResponse } | undefined;
    let closed = false;
    const server = createServer((req, res) => {
      held = { req, res };
      res.once('close', () => (closed = true));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => (server.close(() => resolve()), server.closeAllConnections())));
    const port = (server.address() as AddressInfo).port;

    const client = request({ host: '127.0.0.1', port, path: '/events' });
    client.on('error', () => undefined);
    client.end();
    await waitFor(async () => held !== undefined, 10_000, 'the request to arrive');
    client.destroy();
    await waitFor(async () => closed, 10_000, 'the server to see the connection close');

    hub.start(held!.req, held!.res, stream);
    await waitFor(async () => hub.size === 0, 10_000, 'the stream to be given back');
    expect(changes.watched()).toEqual([]);
    expect(hub.admits('u1')).toBe(true);
  });

  it('ends a stream whose sign-in ended, at the next keep-alive, without a project change', async () => {
    const changes = new ProjectChanges();
    const hub = new LiveHub(changes, () => () => undefined, silentLogger(), { keepAliveMs: 20 });
    let signedIn = true;
    const events: string[] = [];
    const stream = {
      userId: 'u1',
      projectId: 'p1',
      signedIn: async () => signedIn,
      push: async (write: (event: string, data: unknown) => void) => {
        if (signedIn) return true;
        write('signed-out', { location: '/signin' });
        return false;
      },
    };
    const server = createServer((req, res) => hub.start(req, res, stream));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => (server.close(() => resolve()), server.closeAllConnections())));
    const port = (server.address() as AddressInfo).port;
    let ended = false;
    const client = request({ host: '127.0.0.1', port, path: '/events' }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => events.push(chunk));
      res.on('end', () => (ended = true));
    });
    client.on('error', () => undefined);
    client.end();
    await waitFor(
      async () => hub.size === 1 && events.some((e) => e.includes('keep-alive')),
      10_000,
      'the stream to be open and kept alive',
    );
    signedIn = false;
    await waitFor(async () => ended, 10_000, 'the stream to end');
    expect(events.join('')).toContain('event: signed-out');
    expect(hub.size).toBe(0);
  });
});
