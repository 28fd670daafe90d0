/**
 * Wrappers that put a check in front of every method of a repository (docs/architecture.md "The
 * store port"): `store.repos` waits while this process has a transaction open (a statement run
 * then would join it, and could read its uncommitted rows), and a transaction's repositories
 * refuse calls once it has ended.
 */

/** Each repository prototype's method names, found once (a transaction guards its repositories anew). */
const namesByPrototype = new WeakMap<object, string[]>();

/** The methods of a repository object (its prototype's functions). */
function methodNames(repo: object): string[] {
  const proto = Object.getPrototypeOf(repo) as object;
  let names = namesByPrototype.get(proto);
  if (!names) {
    names = Object.getOwnPropertyNames(proto).filter(
      (name) => name !== 'constructor' && typeof (proto as Record<string, unknown>)[name] === 'function',
    );
    namesByPrototype.set(proto, names);
  }
  return names;
}

/**
 * `repo` with every method run through `around`, which gets the call as a thunk.
 * @param around runs the call (now, or later) and returns its promise.
 */
export function guardRepo<R extends object>(repo: R, around: (call: () => Promise<unknown>) => Promise<unknown>): R {
  const guarded: Record<string, unknown> = {};
  for (const name of methodNames(repo)) {
    const method = (repo as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    guarded[name] = (...args: unknown[]) => around(() => method.apply(repo, args));
  }
  return guarded as R;
}
