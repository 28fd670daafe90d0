/**
 * A code answer must build with every Expo SDK the server serves: an import that resolves in one
 * SDK's packages but not in another's is refused with the module's name and the SDK that lacks
 * it, before anything is applied. The SDKs' packages here are small stand-in folders laid out as
 * npm lays them out (a package with `exports`, a platform file, a folder index).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCodeAnswer, type CodeAnswerRules } from '../src/builders/expo/code-answer.js';
import { resolvesIn, sdksMissing } from '../src/builders/expo/sdk-modules.js';
import { ROOT, tempDir } from './helpers.js';

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** node_modules of two SDKs: 58 has `expo/new-thing` and a platform file 54 lacks. */
function sdkFolders(): { sdk58: string; sdk54: string } {
  const base = tempDir('mbm-sdk-modules-');
  const sdk58 = join(base, '58', 'node_modules');
  const sdk54 = join(base, '54', 'node_modules');
  for (const nm of [sdk58, sdk54]) {
    write(join(nm, 'expo', 'package.json'), JSON.stringify({ name: 'expo', main: 'index.js' }));
    write(join(nm, 'expo', 'index.js'), 'module.exports = {};');
    write(join(nm, 'react-native', 'package.json'), JSON.stringify({ name: 'react-native', main: 'index.js' }));
    write(join(nm, 'react-native', 'index.js'), 'module.exports = {};');
    write(join(nm, 'react-native', 'Libraries', 'Shared', 'index.js'), 'module.exports = {};');
  }
  write(join(sdk58, 'expo', 'new-thing.js'), 'module.exports = {};');
  write(join(sdk58, 'react-native', 'Libraries', 'Only58', 'Thing.ios.js'), 'module.exports = {};');
  return { sdk58, sdk54 };
}

describe('modules every served SDK ships', () => {
  it('resolves package paths as Node and Metro do: exports, platform files, folder indexes', () => {
    const { sdk58, sdk54 } = sdkFolders();
    expect(resolvesIn(sdk58, 'expo')).toBe(true);
    expect(resolvesIn(sdk58, 'expo/new-thing')).toBe(true);
    expect(resolvesIn(sdk54, 'expo/new-thing')).toBe(false);
    expect(resolvesIn(sdk58, 'react-native/Libraries/Only58/Thing')).toBe(true);
    expect(resolvesIn(sdk54, 'react-native/Libraries/Only58/Thing')).toBe(false);
    expect(resolvesIn(sdk54, 'react-native/Libraries/Shared')).toBe(true);
    const served = [
      { sdk: 58, nodeModules: sdk58 },
      { sdk: 54, nodeModules: sdk54 },
    ];
    expect(sdksMissing(served, 'expo/new-thing')).toEqual([54]);
    expect(sdksMissing(served, 'react-native')).toEqual([]);
  });

  it('refuses a code answer that imports a module one served SDK lacks, naming it and the SDK', () => {
    const { sdk58, sdk54 } = sdkFolders();
    const root = tempDir('mbm-sdk-app-');
    write(join(root, 'App.tsx'), 'export default function App() { return null; }\n');
    const rules: CodeAnswerRules = {
      root,
      packages: ['expo', 'react-native'],
      typescriptFrom: join(ROOT, 'node_modules'),
      sdkModules: [
        { sdk: 58, nodeModules: sdk58 },
        { sdk: 54, nodeModules: sdk54 },
      ],
      maxFiles: 5,
      maxFileBytes: 100_000,
      maxTotalBytes: 150_000,
    };
    const answer = (code: string) => JSON.stringify({ summary: 'x', files: [{ path: 'App.tsx', content: code }] });
    const refused = checkCodeAnswer(
      rules,
      answer("import thing from 'expo/new-thing';\nexport default function App() { return thing; }\n"),
    );
    expect(refused.ok).toBe(false);
    expect(refused.ok === false && refused.issues.map((i) => i.problem)).toEqual([
      'App.tsx imports "expo/new-thing", which Expo SDK 54 does not have (the app is built for Expo SDK 58 and 54: use only modules every one of them ships)',
    ]);
    expect(
      checkCodeAnswer(
        rules,
        answer("import 'react-native/Libraries/Shared';\nexport default function App() { return null; }\n"),
      ).ok,
    ).toBe(true);
    // Without the served SDKs' packages (a question asked by an older server) only the package list counts.
    const { sdkModules: _, ...older } = rules;
    expect(
      checkCodeAnswer(
        older,
        answer("import thing from 'expo/new-thing';\nexport default function App() { return thing; }\n"),
      ).ok,
    ).toBe(true);
  });
});
