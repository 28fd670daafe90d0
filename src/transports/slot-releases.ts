/**
 * What gives a request slot back when the client goes away: the HTTP transport holds a slot per
 * authenticated request until its reply is sent or its connection closes, whichever comes first.
 * A close listener per request (`res.once('close')`) was a measurable share of a short call, so
 * each connection gets one listener, the first time it carries a request, and the releases of its
 * requests in flight wait in a set (more than one with HTTP pipelining).
 */
import type { Socket } from 'node:net';

/** The slot releases of the requests in flight, per connection. */
export class SlotReleases {
  private readonly bySocket = new WeakMap<Socket, Set<() => void>>();

  /** Runs `release` if `socket` closes before `drop(socket, release)`. */
  hold(socket: Socket, release: () => void): void {
    let held = this.bySocket.get(socket);
    if (!held) {
      const releases = new Set<() => void>();
      held = releases;
      this.bySocket.set(socket, releases);
      socket.once('close', () => {
        for (const each of releases) each();
        releases.clear();
      });
    }
    held.add(release);
  }

  /** The request of `release` was answered: its connection's close no longer concerns it. */
  drop(socket: Socket, release: () => void): void {
    this.bySocket.get(socket)?.delete(release);
  }
}
