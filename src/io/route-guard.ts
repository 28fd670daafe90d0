/**
 * The shape of a route's guards and handler, shared by the HTTP transport's declared pipeline
 * (`transports/http-pipeline.ts`) and the web console's route groups, which may not import the
 * transport (docs/architecture.md "The HTTP pipeline").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A check a route passes before its handler: true lets the request through, false means the guard
 * has answered it (a refusal, a redirect, an error page). May be asynchronous (reading a form); it
 * must not throw.
 */
export type Guard = ((req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>) & {
  readonly guardName: string;
};

/** The handler a route ends in: `path` without the query, `query` parsed. */
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
) => Promise<void> | void;

/** Names a guard (the name the route table and docs/architecture.md show); returns `check` itself. */
export function guard(
  name: string,
  check: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>,
): Guard {
  return Object.assign(check, { guardName: name });
}
