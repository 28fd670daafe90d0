/**
 * The shape of the console's routes (docs/architecture.md "The HTTP pipeline"): their guards and
 * handlers are the transport's (`io/route-guard.ts`), which the console cannot import from the
 * transport itself.
 */
import type { IncomingMessage } from 'node:http';
import type { Guard, RouteHandler } from '../io/route-guard.js';

/** One route of the console: its path (exact, or a prefix ending in `*`), its guards in order, its handler (every method). */
export interface ConsoleRoute {
  path: string;
  guards: readonly Guard[];
  handler: RouteHandler;
}

/** True for GET and HEAD (a method absent counts as GET). */
export function isReading(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  return method === 'GET' || method === 'HEAD';
}
