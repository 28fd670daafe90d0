/**
 * The shape of the console's routes and guards (docs/architecture.md "The HTTP pipeline"): the
 * transport's guard shape (`transports/http-pipeline.ts`), which the console cannot import.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A check before a console page, of the transport's guard shape: true lets the request through;
 * false means it has answered (a redirect, an error page). It must not throw.
 */
export type ConsoleGuard = ((req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>) & {
  readonly guardName: string;
};

/** Names a console guard (the name the transport's route table shows). */
export function consoleGuard(
  name: string,
  check: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>,
): ConsoleGuard {
  return Object.assign(check, { guardName: name });
}

/** One route of the console: its path (exact, or a prefix ending in `*`), its guards in order, its handler (every method). */
export interface ConsoleRoute {
  path: string;
  guards: readonly ConsoleGuard[];
  handler(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> | void;
}

/** True for GET and HEAD (a method absent counts as GET). */
export function isReading(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  return method === 'GET' || method === 'HEAD';
}
