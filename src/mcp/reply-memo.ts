/**
 * The reply memo (docs/architecture.md "The reply memo"): the one place that makes repeated reads
 * cheap. The gateway keeps the result of a successful `tools/call` of a read-only tool (one that
 * declared which of its calls may be kept: `ToolDefinition.memo`), keyed by the caller (user and
 * token), the tool and the call's arguments in a canonical form (keys in a stable order), and
 * answers the same call again with the same result, whose JSON text is kept with it
 * (`ToolResultWithJson`): the reply's bytes are those of the first answer with the new request id
 * spliced in (`replyJson`).
 *
 * Validity: an entry is served only while the stamp it was read at is current: the store's
 * `rowGeneration()` (any write of this process to the rows a session or project shows, and any
 * commit of another process on the data dir), the store's `projectRowGeneration()` where it has
 * no row generation, the token cache's generation (a token revoked or a plan changed, here or by
 * another node) and the artifact base of links. Any change drops every entry. What a tool's kept
 * answers depend on (`MemoCovers`) says which generation must exist: on a store without a row
 * generation (PostgreSQL: another node's commit is known only when its notice arrives) only the
 * answers made of one project row are kept, valid while the project cache's generation stays put
 * (they are then never staler than that cache: docs/postgresql.md "The reply memo"); every other
 * call reads.
 *
 * Bounds: at most `maxEntries` entries and `maxBytes` bytes of reply text (default 1 000 and
 * 8 MiB); past either, the oldest entries are dropped first. A result larger than a quarter of
 * `maxBytes` is not kept.
 */
import { stringify } from 'safe-stable-stringify';
import type { Caller } from '../auth/caller.js';
import { ToolResultWithJson } from './reply-json.js';

/**
 * What a kept answer depends on besides the caller and the arguments: `rows`, the rows the
 * store's `rowGeneration()` covers; `project`, one project row alone (covered by the row
 * generation, or on a store without one by its `projectRowGeneration()`).
 */
export type MemoCovers = 'rows' | 'project';

/** What an entry is valid for; a field that differs from the current one drops every entry. */
export interface MemoStamp {
  /** The store's `rowGeneration()`: null on a store without one (PostgreSQL). */
  rows: number | null;
  /** What covers project rows: `rows` where it is not null, else the store's `projectRowGeneration()` (null while it cannot tell). */
  project: number | null;
  /** The token cache's generation (`TokenService.generation`). */
  tokens: number;
  /** The artifact base of links (`PublicUrl.artifacts()`). */
  base: string;
}

/** Default bound on the entries kept. */
const DEFAULT_MAX_ENTRIES = 1_000;
/** Default bound on the reply text kept, in bytes (UTF-16 code units, about bytes for JSON). */
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/** Options of the memo; every field has a default. */
export interface ReplyMemoOptions {
  /** Entries kept at most (default 1 000). */
  maxEntries?: number;
  /** Reply text kept at most, in bytes (default 8 MiB). */
  maxBytes?: number;
}

/** What the memo holds and has answered since it was made. */
export interface MemoStats {
  entries: number;
  /** Reply text kept, in bytes. */
  bytes: number;
  /** Calls answered from the memo. */
  hits: number;
  /** Lookups that found nothing kept (over HTTP a miss is looked up twice: by the first stage and by the call). */
  misses: number;
}

/** One kept answer. */
interface Entry {
  result: ToolResultWithJson;
  bytes: number;
}

/** The gateway's memo of read-only replies (see the file comment). */
export class ReplyMemo {
  private readonly entries = new Map<string, Entry>();
  private stamp: MemoStamp | null = null;
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  /**
   * @param current the stamp of now; a field of it that is null keeps nothing that depends on
   *   it. Called once per memoizable call; `lastLook` as in `look`.
   */
  constructor(
    private readonly current: (lastLook: boolean) => MemoStamp,
    options: ReplyMemoOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** The key of a call: the caller's user and token, the tool and its arguments, canonical. */
  static keyOf(caller: Caller, tool: string, args: Readonly<Record<string, unknown>>): string {
    return `${caller.userId}\n${caller.tokenId}\n${tool}\n${stringify(args)}`;
  }

  /**
   * Looks `key` (of a tool whose answers depend on `covers`) up at the current stamp: the kept
   * result, or a miss with the stamp to pass to `keep` once the call was answered (taken before
   * the reads: a write made while they run moves it, and their answer is not kept), null when the
   * stamp's generation for `covers` is null (nothing to keep). A stamp that moved drops every
   * entry first.
   * @param lastLook the store's row generation as of its last look at other processes' commits
   *   (`Store.rowGeneration`), for a call whose caller's token was checked by the token cache
   *   after the call arrived: that check looked (docs/architecture.md "The reply memo").
   */
  look(
    key: string,
    covers: MemoCovers = 'rows',
    lastLook = false,
  ): { hit: ToolResultWithJson } | { miss: MemoStamp | null } {
    const now = this.current(lastLook);
    const kept = this.stamp;
    if (
      !kept ||
      kept.rows !== now.rows ||
      kept.project !== now.project ||
      kept.tokens !== now.tokens ||
      kept.base !== now.base
    ) {
      this.clear(now);
      this.misses++;
      return { miss: now[covers] === null ? null : now };
    }
    if (kept[covers] === null) {
      this.misses++;
      return { miss: null };
    }
    const entry = this.entries.get(key);
    if (!entry) {
      this.misses++;
      return { miss: kept };
    }
    return { hit: entry.result };
  }

  /**
   * Keeps `result` for `key` when `stamp` (from `look`) is still the memo's, the result carries its
   * JSON text and it fits the bounds; else does nothing.
   */
  keep(key: string, stamp: MemoStamp | null, result: unknown): void {
    if (stamp === null || stamp !== this.stamp || !(result instanceof ToolResultWithJson)) return;
    const bytes = result.toJsonText().length;
    if (bytes * 4 > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || this.bytes + bytes > this.maxBytes)) {
      const [oldest, entry] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    this.entries.set(key, { result, bytes });
    this.bytes += bytes;
  }

  /** Counts a call answered from the memo (a `look` hit whose call was then admitted). */
  served(): void {
    this.hits++;
  }

  /** What the memo holds now, and its hits and misses so far. */
  stats(): MemoStats {
    return { entries: this.entries.size, bytes: this.bytes, hits: this.hits, misses: this.misses };
  }

  private clear(stamp: MemoStamp): void {
    this.entries.clear();
    this.bytes = 0;
    this.stamp = stamp;
  }
}
