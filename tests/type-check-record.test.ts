/**
 * The record of a workspace's last passing type check (docs/builders.md "Skipping the type
 * check"), on files alone: which edits keep a fingerprint's types digest (a JSON value of the
 * same inferred type) and which change it (a code file, a key, a kind, a file added, the
 * configuration, the toolchain), and that a record written by another process never verifies.
 * The builder skipping a real `tsc --noEmit` is `tests/expo/expo-type-check-skip.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { toolchainsFor } from '../src/builders/expo/index.js';
import { jsonShape, TypeCheckRecords } from '../src/builders/expo/type-check-record.js';
import type { ExpoToolchain } from '../src/builders/expo/toolchain.js';

const SETTINGS = { name: 'Habits', subtitle: '', accentColor: '#30a46c', darkMode: false, instructions: ['a'] };

let app: string;
let toolchain: ExpoToolchain;

function write(path: string, content: unknown): void {
  const text = typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`;
  writeFileSync(join(app, path), text);
}

function setTypeScript(version: string): void {
  write('../tc/expo-sdk-58/node_modules/typescript/package.json', { name: 'typescript', version });
}

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), 'mbm-tcr-'));
  app = join(root, 'app');
  toolchain = toolchainsFor({ dataDir: root, toolchainsDir: join(root, 'tc') })[0];
  mkdirSync(join(toolchain.dir, 'node_modules', 'typescript'), { recursive: true });
  writeFileSync(join(toolchain.dir, 'package-lock.json'), '{"lockfileVersion":3}\n');
  mkdirSync(join(app, 'src'), { recursive: true });
  setTypeScript('6.0.3');
  write('tsconfig.json', { extends: 'expo/tsconfig.base', compilerOptions: { strict: true } });
  write('package.json', { name: 'app', main: 'index.ts' });
  write('App.tsx', "import settings from './src/app-settings.json';\nexport default settings;\n");
  write('src/app-settings.json', SETTINGS);
  mkdirSync(join(app, '.svc', 'web'), { recursive: true });
  write('.svc/web/index.html', 'ignored');
  return () => rmSync(root, { recursive: true, force: true });
});

/** Records the app as it is now as passing, applies `edit`, and says what the next build would do. */
async function afterEdit(edit: () => void, records = new TypeCheckRecords()): Promise<string | null> {
  const passed = await records.fingerprint(app, toolchain);
  expect(passed).not.toBeNull();
  await records.recordPass(app, toolchain, passed!);
  edit();
  return records.skipped(app, await records.fingerprint(app, toolchain));
}

describe('type check record', () => {
  it('skips when nothing changed or only JSON values of the same type changed', async () => {
    expect(await afterEdit(() => undefined)).toMatch(/^Type check skipped: nothing tsc --noEmit reads changed/);
    expect(await afterEdit(() => write('.svc/web/index.html', 'output changes'))).toMatch(/nothing .* changed/);
    // The web export's favicon cache in .expo/: nothing TypeScript reads.
    expect(await afterEdit(() => mkdirSync(join(app, '.expo')))).toMatch(/nothing .* changed/);
    const favicon = join(app, '.expo', 'web', 'cache', 'favicon-1');
    expect(await afterEdit(() => mkdirSync(favicon, { recursive: true }))).toMatch(/nothing .* changed/);
    expect(await afterEdit(() => write('.expo/web/cache/favicon-1/favicon-48.png', 'png'))).toMatch(/nothing/);
    const values = { ...SETTINGS, subtitle: 'Daily', accentColor: '#000', darkMode: true, instructions: ['b', 'c'] };
    expect(await afterEdit(() => write('src/app-settings.json', values))).toMatch(
      /^Type check skipped: only JSON values changed since the last passing check/,
    );
  });

  it('runs the check after any edit that could change its result', async () => {
    const edits: Array<[string, () => void]> = [
      ['a key added', () => write('src/app-settings.json', { ...SETTINGS, extra: 1 })],
      ['a boolean turned string', () => write('src/app-settings.json', { ...SETTINGS, darkMode: 'yes' })],
      ['an array emptied', () => write('src/app-settings.json', { ...SETTINGS, instructions: [] })],
      ['an array element of a new kind', () => write('src/app-settings.json', { ...SETTINGS, instructions: ['a', 1] })],
      ['a duplicate key', () => write('src/app-settings.json', '{"name": "a", "name": 1}')],
      ['JSON with a comment', () => write('src/app-settings.json', '// x\n{}')],
      ['a code file edited', () => write('App.tsx', '// one line\nexport default 1;\n')],
      ['a file added', () => write('src/extra.ts', 'export {};\n')],
      [
        'generated types added',
        () => {
          mkdirSync(join(app, '.expo'), { recursive: true });
          write('.expo/types.d.ts', 'export {};\n');
        },
      ],
      ['a folder added', () => mkdirSync(join(app, 'src', 'screens'))],
      ['a file removed', () => rmSync(join(app, 'App.tsx'))],
      ['package.json value', () => write('package.json', { name: 'app', main: 'other.ts' })],
      [
        'tsconfig value',
        () => write('tsconfig.json', { extends: 'expo/tsconfig.base', compilerOptions: { strict: false } }),
      ],
      ['TypeScript upgraded', () => setTypeScript('6.0.4')],
    ];
    for (const [name, edit] of edits) {
      expect(await afterEdit(edit), name).toBeNull();
      // Back to the first state for the next edit.
      rmSync(join(app, 'src', 'extra.ts'), { force: true });
      rmSync(join(app, '.expo', 'types.d.ts'), { force: true });
      rmSync(join(app, 'src', 'screens'), { recursive: true, force: true });
      write('App.tsx', "import settings from './src/app-settings.json';\nexport default settings;\n");
      write('src/app-settings.json', SETTINGS);
      write('package.json', { name: 'app', main: 'index.ts' });
      write('tsconfig.json', { extends: 'expo/tsconfig.base', compilerOptions: { strict: true } });
      setTypeScript('6.0.3');
    }
  });

  it('compares every JSON file in full when the tsconfig may name one as configuration', async () => {
    write('tsconfig.json', { extends: './src/base.json' });
    write('src/base.json', { compilerOptions: { strict: true } });
    expect(await afterEdit(() => write('src/base.json', { compilerOptions: { jsx: 'react' } }))).toBeNull();
    write('tsconfig.json', '// a comment\n{ "extends": "expo/tsconfig.base" }');
    expect(await afterEdit(() => write('src/app-settings.json', { ...SETTINGS, subtitle: 'x' }))).toBeNull();
  });

  it('never trusts a record it did not write', async () => {
    const first = new TypeCheckRecords();
    const passed = await first.fingerprint(app, toolchain);
    await first.recordPass(app, toolchain, passed!);
    expect(await first.skipped(app, passed)).not.toBeNull();
    // Another process (a restart, another node) or a forged file: the check runs.
    expect(await new TypeCheckRecords().skipped(app, passed)).toBeNull();
    write('.svc/type-check-pass.json', { ...passed, mac: '00' });
    expect(await first.skipped(app, passed)).toBeNull();
    write('.svc/type-check-pass.json', 'not json');
    expect(await first.skipped(app, passed)).toBeNull();
  });

  it("never opens a FIFO, and writes no record through the app's links", async () => {
    const records = new TypeCheckRecords();
    const passed = await records.fingerprint(app, toolchain);
    // Counted by its path and kind, never opened (which would wait for a writer).
    execFileSync('mkfifo', [join(app, 'src', 'pipe.ts')]);
    expect((await records.fingerprint(app, toolchain))?.types).not.toBe(passed!.types);
    rmSync(join(app, 'src', 'pipe.ts'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'mbm-tcr-elsewhere-'));
    rmSync(join(app, '.svc'), { recursive: true });
    symlinkSync(elsewhere, join(app, '.svc'));
    await records.recordPass(app, toolchain, passed!);
    expect(readdirSync(elsewhere)).toEqual([]);
    rmSync(elsewhere, { recursive: true });
  });

  it('infers JSON shapes as TypeScript widens them', () => {
    const shape = (text: string) => jsonShape(Buffer.from(text));
    expect(shape('{"a": "x", "b": [1, 2], "c": {"d": null}}')).toBe('{"a":string,"b":[number],"c":{"d":null}}');
    expect(shape('{"a": "y", "b": [3], "c": {"d": null}}')).toBe(shape('{"a": "x", "b": [1, 2], "c": {"d": null}}'));
    expect(shape('[1, "a"]')).toBe(shape('["b", 2, 3]'));
    expect(shape('{"a": "x:y"}')).toBe('{"a":string}');
    expect(shape('{"a": 1, "a": 2}')).toBeNull();
    expect(shape('{"a": 1,}')).toBeNull();
  });
});
