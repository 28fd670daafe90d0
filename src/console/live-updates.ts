/**
 * Server-Sent Events of the web console (docs/console.md "Web console"): one stream per open project page.
 * The server pushes when the project changes (the workflow engine's change notices), never on a
 * timer per page: a change wakes the page's stream, which renders the new state once (changes
 * that arrive meanwhile are coalesced). Changes committed by another process on the same store
 * reach the store's events as a reset (SQLite: its `data_version` poll), which wakes every open stream.
 * Streams are bounded per user and in all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';

/** One open stream: what it pushes when woken. */
export interface LiveStream {
  userId: string;
  projectId: string;
  /** Renders and writes what changed; resolves false when the stream should end (signed out, access lost). */
  push(write: (event: string, data: unknown, id?: string) => void): Promise<boolean>;
  /**
   * Whether the stream's sign-in still holds, checked at each keep-alive: when it no longer does
   * (signed out in another tab, token revoked), the stream is pushed at once, so that it ends
   * without waiting for the project to change.
   */
  signedIn?(): Promise<boolean>;
}

/** Limits of the hub. */
export interface LiveHubOptions {
  /** Open streams per user (default 8). */
  perUser?: number;
  /** Open streams in all (default 512). */
  total?: number;
  /** Comment line sent to keep proxies from closing an idle stream, in ms (default 25 000). */
  keepAliveMs?: number;
  /** Delay that coalesces a burst of changes into one push, in ms (default 50). */
  coalesceMs?: number;
  /**
   * Bytes a stream may have written that its reader has not taken yet (default 1 MiB); past it
   * the stream is dropped, and the browser's EventSource reconnects to the current state.
   */
  maxBufferedBytes?: number;
}

/** Where change notices come from. */
interface ChangeSource {
  subscribe(projectId: string, listener: (projectId: string) => void): () => void;
}

interface Open {
  stream: LiveStream;
  wake(): void;
  /** Ends the stream; `drop` discards what its reader has not taken (closing the connection). */
  end(drop?: boolean): void;
}

/** Opens, wakes and ends the console's event streams. */
export class LiveHub {
  private readonly open = new Set<Open>();
  private readonly perUser: number;
  private readonly total: number;
  private readonly keepAliveMs: number;
  private readonly coalesceMs: number;
  private readonly maxBufferedBytes: number;
  private stopResets: (() => void) | undefined;

  /**
   * @param changes this process's project change notices.
   * @param onReset the store's reset notices (`StoreEvents.onReset`): subscribed while streams are open.
   */
  constructor(
    private readonly changes: ChangeSource,
    private readonly onReset: (listener: () => void) => () => void,
    private readonly logger: Logger,
    options: LiveHubOptions = {},
  ) {
    this.perUser = options.perUser ?? 8;
    this.total = options.total ?? 512;
    this.keepAliveMs = options.keepAliveMs ?? 25_000;
    this.coalesceMs = options.coalesceMs ?? 50;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
  }

  /** Whether `userId` may open one more stream now. */
  admits(userId: string): boolean {
    if (this.open.size >= this.total) return false;
    let mine = 0;
    for (const o of this.open) if (o.stream.userId === userId) mine++;
    return mine < this.perUser;
  }

  /** Starts streaming to `res` and pushes the current state at once. */
  start(req: IncomingMessage, res: ServerResponse, stream: LiveStream): void {
    openEventStream(req, res);
    let timer: NodeJS.Timeout | undefined;
    let running = false;
    let again = false;
    let ended = false;
    // A reader that stopped reading (a tab in the background of a stalled link, a script) would
    // make the server keep every change for it in memory: past the bound its stream is dropped.
    const send = (text: string) => {
      if (ended) return;
      res.write(text);
      if (res.writableLength > this.maxBufferedBytes) {
        this.logger.warn(
          { projectId: stream.projectId, buffered: res.writableLength },
          'console event stream dropped: its reader is not reading',
        );
        entry.end(true);
      }
    };
    const write = (event: string, data: unknown, id?: string) =>
      send(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const run = async () => {
      timer = undefined;
      if (ended) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        if (!(await stream.push(write))) entry.end();
      } catch (error) {
        this.logger.warn({ err: error, projectId: stream.projectId }, 'console event stream failed');
        entry.end();
      } finally {
        running = false;
        if (again && !ended) {
          again = false;
          entry.wake();
        }
      }
    };
    const keepAlive = setInterval(() => {
      if (ended) return;
      if (!stream.signedIn) return send(': keep-alive\n\n');
      stream.signedIn().then(
        (signedIn) => (signedIn ? send(': keep-alive\n\n') : entry.wake()),
        () => entry.wake(),
      );
    }, this.keepAliveMs);
    keepAlive.unref();
    const unsubscribe = this.changes.subscribe(stream.projectId, () => entry.wake());
    const entry: Open = {
      stream,
      wake: () => {
        timer ??= setTimeout(() => void run(), this.coalesceMs);
      },
      end: (drop = false) => {
        if (ended) return;
        ended = true;
        if (timer) clearTimeout(timer);
        clearInterval(keepAlive);
        unsubscribe();
        this.open.delete(entry);
        if (this.open.size === 0) this.stopWatch();
        // A dropped stream's unsent bytes are discarded with its socket, not flushed.
        if (drop) res.destroy();
        else res.end();
      },
    };
    this.open.add(entry);
    res.once('close', () => entry.end());
    // The browser may have gone while the request was checked: its 'close' has already fired.
    if (res.destroyed || req.socket.destroyed) return entry.end();
    this.startWatch();
    void run();
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const o of [...this.open]) o.end();
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  private startWatch(): void {
    this.stopResets ??= this.onReset(() => {
      for (const o of this.open) o.wake();
    });
  }

  private stopWatch(): void {
    this.stopResets?.();
    this.stopResets = undefined;
  }
}

/** Answers 200 with an event stream's headers and its reconnection delay; the socket gets no idle timeout and no Nagle delay. */
function openEventStream(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Accel-Buffering': 'no',
  });
  // Browsers reconnect after 3 s by default; ask for a little more on a busy server.
  res.write('retry: 5000\n\n');
  req.socket.setTimeout(0);
  req.socket.setNoDelay(true);
}
