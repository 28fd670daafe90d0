/**
 * Wrappers that put a check in front of every method of a repository (docs/architecture.md "The
 * store port"): `store.repos` waits while this process has a transaction open (a statement run
 * then would join it, and could read its uncommitted rows), and a transaction's repositories
 * refuse calls once it has ended.
 */

/** Each repository prototype's method names, found once. */
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

/** What a transaction's repositories look at before each call: whether it is open, and why it ended early. */
interface TxGate {
  readonly open: boolean;
  readonly spanned: Error | null;
}

/** A method run as it is, or with a check around it (`RowGeneration.countedCall`). */
type CallWrap = (method: string, call: (...args: unknown[]) => Promise<unknown>) => typeof call;

/** A transaction's repository: the prototype's methods, and its transaction's gate. */
interface GatedRepo {
  gate: TxGate;
}

/**
 * The methods of `repo` for the repositories of every transaction, built once per store: a
 * repository of one transaction is `gatedRepo(prototype, gate)`, one small object, whose methods
 * run `repo`'s (through `wrap`) while its gate is open and reject once its transaction has ended.
 * Its methods must be called on it (`tx.workflows.findById(id)`), not taken off it.
 */
export function gatedPrototype(repo: object, wrap: CallWrap = (_method, call) => call): object {
  const prototype: Record<string, unknown> = {};
  for (const name of methodNames(repo)) {
    const method = (repo as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    const call = wrap(name, (...args: unknown[]) => method.apply(repo, args));
    prototype[name] = function (this: GatedRepo, ...args: unknown[]) {
      const { gate } = this;
      if (!gate.open)
        return Promise.reject(
          gate.spanned ?? new Error('The transaction has ended: its repositories cannot be used any more'),
        );
      return call(...args);
    };
  }
  return prototype;
}

/** A transaction's repository: `prototype` (`gatedPrototype`) with the transaction's `gate`. */
export function gatedRepo<R>(prototype: object, gate: TxGate): R {
  const repo = Object.create(prototype) as GatedRepo;
  repo.gate = gate;
  return repo as R;
}
