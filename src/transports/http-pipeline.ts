/**
 * The declared HTTP pipeline (docs/architecture.md "The HTTP pipeline"): each route is mounted with
 * its method, its path and the guards it passes, in order, before its handler, as express's
 * `app.post(path, guard, …, handler)` does: `routes.post('/mcp', hostCheck, bodyLimit, handleMcp)`.
 * A guard lets the request through (`true`) or has answered it (`false`); a handler never repeats
 * a guard's check. Dispatch allocates nothing (an exact path is one map lookup, guards are a
 * loop), so the MCP POST path stays as cheap as a hand-written `if`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Guard, RouteHandler } from '../io/route-guard.js';

/** A mounted route as the docs show it: `GET` also takes `HEAD`, `*` takes every method. */
export interface RouteDescription {
  method: 'GET' | 'POST' | '*';
  /** An exact path, or a prefix ending in `*`. */
  path: string;
  guards: readonly string[];
}

interface Mounted {
  method: RouteDescription['method'];
  path: string;
  /** `path` without its `*`: what a prefixed route's request paths start with. */
  prefix: string;
  guards: readonly Guard[];
  handler: RouteHandler;
}

/** The routing table of one listener: the first mounted route whose method and path match serves. */
export class HttpRoutes {
  private readonly exact = new Map<string, Mounted[]>();
  private readonly prefixed: Mounted[] = [];
  private readonly order: Mounted[] = [];

  /** Mounts `POST path`: the guards in order, then the handler. */
  post(path: string, ...steps: [...Guard[], RouteHandler]): this {
    return this.mount('POST', path, steps);
  }

  /** Mounts `GET` and `HEAD path`. */
  get(path: string, ...steps: [...Guard[], RouteHandler]): this {
    return this.mount('GET', path, steps);
  }

  /** Mounts `path` for every method. */
  all(path: string, ...steps: [...Guard[], RouteHandler]): this {
    return this.mount('*', path, steps);
  }

  /** The routes in mount order, with their guards' names. */
  describe(): RouteDescription[] {
    return this.order.map((r) => ({ method: r.method, path: r.path, guards: r.guards.map((g) => g.guardName) }));
  }

  /**
   * Serves a request with the first matching route.
   * @returns the route's work (a guard or handler promise, or undefined when done at once), or
   *   false when no route matches.
   */
  dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
  ): Promise<void> | void | false {
    const method = req.method ?? 'GET';
    const route = firstOf(this.exact.get(path), method) ?? firstOf(this.prefixed, method, path);
    if (!route) return false;
    return run(route, 0, req, res, path, query);
  }

  private mount(method: RouteDescription['method'], path: string, steps: ReadonlyArray<Guard | RouteHandler>): this {
    const route: Mounted = {
      method,
      path,
      prefix: path.endsWith('*') ? path.slice(0, -1) : path,
      guards: steps.slice(0, -1) as Guard[],
      handler: steps[steps.length - 1] as RouteHandler,
    };
    if (path.endsWith('*')) this.prefixed.push(route);
    else {
      const list = this.exact.get(path);
      if (list) list.push(route);
      else this.exact.set(path, [route]);
    }
    this.order.push(route);
    return this;
  }
}

function methodMatches(route: Mounted, method: string): boolean {
  return route.method === '*' || route.method === method || (route.method === 'GET' && method === 'HEAD');
}

function firstOf(routes: readonly Mounted[] | undefined, method: string, path?: string): Mounted | undefined {
  if (!routes) return undefined;
  for (let i = 0; i < routes.length; i++) {
    const route = routes[i]!;
    if (path !== undefined && !path.startsWith(route.prefix)) continue;
    if (methodMatches(route, method)) return route;
  }
  return undefined;
}

/** Runs the guards from `i` on, then the handler; synchronous until a guard answers with a promise. */
function run(
  route: Mounted,
  i: number,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> | void {
  const { guards } = route;
  for (; i < guards.length; i++) {
    const passed = guards[i]!(req, res);
    if (passed === true) continue;
    if (passed === false) return;
    const next = i + 1;
    return passed.then((ok) => (ok ? run(route, next, req, res, path, query) : undefined));
  }
  return route.handler(req, res, path, query);
}
