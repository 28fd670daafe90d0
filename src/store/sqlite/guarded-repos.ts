/**
 * Wrappers that put a check in front of every method of a repository (docs/architecture.md "The
 * store port"): `store.repos` waits while this process has a transaction open (a statement run
 * then would join it, and could read its uncommitted rows), and a transaction's repositories
 * refuse calls once it has ended.
 */

/** The methods of a repository object (its prototype's functions). */
function methodNames(repo: object): string[] {
  const proto = Object.getPrototypeOf(repo) as object;
  return Object.getOwnPropertyNames(proto).filter(
    (name) => name !== 'constructor' && typeof (proto as Record<string, unknown>)[name] === 'function',
  );
}

/**
 * `repo` with every method run through `around`, which gets the call as a thunk; a method that
 * answers without a promise (`peek…`, such as `ProjectRepo.peekById`) runs through `peek` instead,
 * which runs it now or answers undefined ("not at hand": the caller then uses the method that waits).
 * @param around runs the call (now, or later) and returns its promise.
 * @param peek runs the call now, or returns undefined without running it.
 */
export function guardRepo<R extends object>(
  repo: R,
  around: (call: () => Promise<unknown>) => Promise<unknown>,
  peek: (call: () => unknown) => unknown,
): R {
  const guarded: Record<string, unknown> = {};
  for (const name of methodNames(repo)) {
    const method = (repo as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    guarded[name] = name.startsWith('peek')
      ? (...args: unknown[]) => peek(() => method.apply(repo, args))
      : (...args: unknown[]) => around(() => method.apply(repo, args));
  }
  return guarded as R;
}
