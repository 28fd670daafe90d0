/**
 * The record of a workspace's last passing type check, so that a build whose type check could
 * not give another result skips it (docs/builders.md "Skipping the type check").
 *
 * A fingerprint covers everything `tsc --noEmit` can read that may change between builds: the
 * toolchain (its folder, its lockfile, the TypeScript version), and every file and folder of the
 * workspace outside `node_modules`, `.git` and `.svc/` by its path (in `.expo/`, only files
 * TypeScript can read). A file's content counts in
 * full, except a JSON file that TypeScript can only read as a module (`resolveJsonModule`),
 * which counts by the type TypeScript infers for it: a string's value never changes its type
 * `string`, a key added or a number turned string does. Configuration JSON (`package.json`,
 * `tsconfig*.json`, `jsconfig*.json`, and every JSON file when `tsconfig.json` is not plain JSON
 * without relative `extends`, `references` or incremental options) counts in full.
 *
 * The record lives beside the app in `.svc/` (ignored by git, kept across resets) and carries an
 * HMAC made with a key this server process drew at random: the app's own code runs during an
 * export with the workspace writable and could write any record, but not one that verifies, and
 * a record from another server or an earlier process never verifies either (the check then runs).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ExpoToolchain } from './toolchain.js';
import { OUTPUT_DIR } from './workspace.js';

/** Where the record is kept, relative to the workspace. */
const RECORD_FILE = join(OUTPUT_DIR, 'type-check-pass.json');

/** Folders of the workspace's root never fingerprinted (the toolchain link, git, the output). */
const NOT_READ = new Set(['node_modules', '.git', OUTPUT_DIR]);

/**
 * In `.expo/` (Expo's caches, such as the web export's favicons), only files TypeScript can read
 * count: its include patterns never enter a dot-folder but `.expo/types`, and an import names a file.
 */
const DOT_EXPO = '.expo/';
const TS_READABLE = /\.([cm]?[jt]sx?|json)$/i;

/** More entries than this: no fingerprint (the check runs). */
const MAX_ENTRIES = 20_000;

/** JSON files whose string values configure the compiler or module resolution. */
const CONFIG_JSON = /^(package(-lock)?|(ts|js)config(\..*)?)\.json$/i;

/** A workspace's fingerprint as two SHA-256 digests (hex). */
export interface TypeCheckFingerprint {
  /** JSON modules by their inferred type: equal means the check would give the same result. */
  types: string;
  /** Every file in full: equal means nothing the check reads changed at all. */
  exact: string;
}

/** What a build says when its check is skipped, by how the fingerprint matched. */
const SKIPPED = {
  unchanged: 'Type check skipped: nothing tsc --noEmit reads changed since the last passing check.',
  'json-values':
    'Type check skipped: only JSON values changed since the last passing check, not the types TypeScript infers for them, so tsc --noEmit would pass again.',
};

/** The records of one server process (see the file comment). */
export class TypeCheckRecords {
  private readonly key = randomBytes(32);

  /**
   * The fingerprint of the app in `dir` for a check with `toolchain`, or null when one cannot be
   * taken (a folder unreadable, too many files): the check then runs.
   */
  async fingerprint(dir: string, toolchain: ExpoToolchain): Promise<TypeCheckFingerprint | null> {
    try {
      const entries = await listEntries(dir);
      if (!entries) return null;
      const jsonByShape = await plainTsconfig(dir);
      const types = createHash('sha256');
      const exact = createHash('sha256');
      const link = await readlink(join(dir, 'node_modules')).catch(() => 'not a link');
      const head = `${await toolchainIdentity(toolchain)}node_modules\0${link}\n`;
      types.update(head);
      exact.update(head);
      for (const { path, kind } of entries) {
        const full = join(dir, path);
        if (kind !== 'file') {
          const line = `${kind}\0${path}\0${kind === 'link' ? await readlink(full) : ''}\n`;
          types.update(line);
          exact.update(line);
          continue;
        }
        const content = await readRegular(full);
        if (!content) return null;
        const hash = createHash('sha256').update(content).digest('hex');
        exact.update(`file\0${path}\0${hash}\n`);
        const shape =
          jsonByShape && path.endsWith('.json') && !CONFIG_JSON.test(basename(path)) ? jsonShape(content) : null;
        types.update(shape === null ? `file\0${path}\0${hash}\n` : `json\0${path}\0${shape}\n`);
      }
      return { types: types.digest('hex'), exact: exact.digest('hex') };
    } catch {
      return null;
    }
  }

  /**
   * Whether the check of `current` in `dir` may be skipped: its types digest equals the last
   * passing one recorded there (and the record verifies).
   * @returns the sentence the build says when it skips, or null when the check must run.
   */
  async skipped(dir: string, current: TypeCheckFingerprint | null): Promise<string | null> {
    if (!current) return null;
    try {
      const record = JSON.parse(await readFile(join(dir, RECORD_FILE), 'utf8')) as Partial<TypeCheckFingerprint> & {
        mac?: string;
      };
      if (typeof record.types !== 'string' || typeof record.exact !== 'string' || typeof record.mac !== 'string')
        return null;
      const expected = Buffer.from(this.mac(dir, record.types, record.exact), 'hex');
      const given = Buffer.from(record.mac, 'hex');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      if (record.types !== current.types) return null;
      return SKIPPED[record.exact === current.exact ? 'unchanged' : 'json-values'];
    } catch {
      return null;
    }
  }

  /**
   * Records `passed`, the fingerprint taken before a check of `dir` that passed, unless the
   * workspace changed while it ran (the export beside it runs the app's build configuration).
   */
  async recordPass(dir: string, toolchain: ExpoToolchain, passed: TypeCheckFingerprint): Promise<void> {
    const after = await this.fingerprint(dir, toolchain);
    if (after?.types !== passed.types || after.exact !== passed.exact) return;
    const file = join(dir, RECORD_FILE);
    try {
      await mkdir(join(dir, OUTPUT_DIR), { recursive: true });
      // The app's code may have put a link there: write into a real folder, never through a link.
      if (!(await lstat(join(dir, OUTPUT_DIR))).isDirectory()) return;
      const body = { ...passed, mac: this.mac(dir, passed.types, passed.exact) };
      const temporary = `${file}.${process.pid}.tmp`;
      await rm(temporary, { force: true });
      await writeFile(temporary, `${JSON.stringify(body)}\n`, { flag: 'wx' });
      await rename(temporary, file);
    } catch {
      // No record: the next build type-checks.
    }
  }

  private mac(dir: string, types: string, exact: string): string {
    return createHmac('sha256', this.key).update(`${dir}\0${types}\0${exact}`).digest('hex');
  }
}

/** The toolchain as the check sees it: its folder, its installed lockfile, its TypeScript. */
async function toolchainIdentity(toolchain: ExpoToolchain): Promise<string> {
  const lock = await readFile(join(toolchain.dir, 'package-lock.json'));
  const typescript = JSON.parse(await readFile(toolchain.bin('typescript/package.json'), 'utf8')) as {
    version?: string;
  };
  const lockHash = createHash('sha256').update(lock).digest('hex');
  return `toolchain\0${toolchain.dir}\0${lockHash}\0${String(typescript.version)}\n`;
}

/** Files larger than this: no fingerprint (the check runs). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The content of the regular file at `path`, or null when it is not one (a link, a FIFO the app's
 * code put there meanwhile: never followed, never waited on) or larger than `MAX_FILE_BYTES`.
 */
async function readRegular(path: string): Promise<Buffer | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Every file, folder and link under `dir` (outside `NOT_READ`), sorted by path; null past `MAX_ENTRIES`. */
async function listEntries(
  dir: string,
): Promise<Array<{ path: string; kind: 'file' | 'dir' | 'link' | 'other' }> | null> {
  const found: Array<{ path: string; kind: 'file' | 'dir' | 'link' | 'other' }> = [];
  const walk = async (relative: string): Promise<boolean> => {
    for (const entry of await readdir(join(dir, relative), { withFileTypes: true })) {
      if (relative === '' && NOT_READ.has(entry.name)) continue;
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      const kind = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
      const counted =
        !`${path}/`.startsWith(DOT_EXPO) || (kind !== 'dir' && (kind !== 'file' || TS_READABLE.test(path)));
      if (counted) found.push({ path, kind });
      if (found.length > MAX_ENTRIES) return false;
      if (kind === 'dir' && !(await walk(path))) return false;
    }
    return true;
  };
  if (!(await walk(''))) return null;
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * True when `tsconfig.json` is plain JSON that names no other JSON file of the app as
 * configuration (no relative `extends`, no `references`) and keeps no build info: then a JSON
 * file other than `CONFIG_JSON` is read by the check only as a module.
 */
async function plainTsconfig(dir: string): Promise<boolean> {
  let config: { extends?: unknown; references?: unknown; compilerOptions?: Record<string, unknown> };
  try {
    config = JSON.parse(await readFile(join(dir, 'tsconfig.json'), 'utf8')) as typeof config;
  } catch {
    return false;
  }
  if (typeof config !== 'object' || config === null || config.references !== undefined) return false;
  const extended =
    config.extends === undefined ? [] : Array.isArray(config.extends) ? config.extends : [config.extends];
  if (extended.some((name) => typeof name !== 'string' || name.startsWith('.') || name.startsWith('/'))) return false;
  const options = config.compilerOptions ?? {};
  return !['incremental', 'composite', 'tsBuildInfoFile'].some((name) => name in options);
}

/**
 * The type TypeScript infers for a JSON module (`resolveJsonModule`: literals widened), as a
 * string: `string`, `number`, `boolean`, `null`, `{"key":<shape>,…}` in the file's key order,
 * `[<shapes of the elements, distinct, sorted>]`. Null (compare in full) when the text is not
 * plain JSON or repeats a key within an object (which `JSON.parse` would hide).
 */
export function jsonShape(content: Buffer): string | null {
  const text = content.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (memberColons(text) !== memberCount(value)) return null;
  return shapeOf(value);
}

function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${[...new Set(value.map(shapeOf))].sort().join('|')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${shapeOf(item)}`)
      .join(',')}}`;
  return typeof value;
}

/** The object members of a parsed JSON value, counted recursively. */
function memberCount(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + memberCount(item), 0);
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce((sum: number, item) => sum + 1 + memberCount(item), 0);
}

/** The colons of a JSON text outside its strings: one per object member. */
function memberColons(text: string): number {
  let count = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === ':') count++;
  }
  return count;
}
