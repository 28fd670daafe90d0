/**
 * Honest `skip` (docs/builders.md "Code questions"): deterministic edits are named as made only when the
 * built app shows them. After the host's model rewrote `App.tsx` so that it no longer reads
 * `src/app-settings.json`, a `skip` answer reports those edits as not shown, and it never tells
 * the operator to turn on `--agent host`, which is already on.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentInput } from '../src/builders/expo/agent-step.js';
import { DeterministicEdits, settingsShown } from '../src/builders/expo/deterministic-edits.js';
import { tempDir } from './helpers.js';

const TEMPLATE = join(import.meta.dirname, '..', 'toolchains', 'template');

function workspace(app?: string, extra: Record<string, string> = {}): string {
  const dir = tempDir('mbm-skip-');
  cpSync(join(TEMPLATE, 'App.tsx'), join(dir, 'App.tsx'));
  mkdirSync(join(dir, 'src'), { recursive: true });
  cpSync(join(TEMPLATE, 'src', 'app-settings.json'), join(dir, 'src', 'app-settings.json'));
  if (app !== undefined) writeFileSync(join(dir, 'App.tsx'), app);
  for (const [path, text] of Object.entries(extra)) writeFileSync(join(dir, path), text);
  return dir;
}

/** Runs the step as the host agent's `skip` does, and returns the messages it posted. */
async function skip(dir: string, instruction: string): Promise<string[]> {
  const said: string[] = [];
  const input = {
    job: { kind: 'build', instruction, history: [], project: { name: 'Habits', description: null } },
    context: { say: (text: string) => said.push(text) },
    workspace: { dir },
  } as unknown as AgentInput;
  await new DeterministicEdits({
    why: 'The code question was answered "skip", so only deterministic edits were made',
    instead: 'Answer with files instead of skip.',
  }).run(input);
  return said;
}

const OWN_APP = `import { Text, View } from 'react-native';
export default function App() {
  return <View><Text>My habits</Text></View>;
}
`;

describe('which settings the app shows', () => {
  it('the template reads every field; an app that no longer imports the file reads none; a partial one some', async () => {
    expect([...(await settingsShown(workspace()))].sort()).toEqual([
      'accentColor',
      'darkMode',
      'instructions',
      'name',
      'subtitle',
    ]);
    expect(await settingsShown(workspace(OWN_APP))).toEqual(new Set());
    const partial = workspace(
      `import { Text } from 'react-native';\nimport { Title } from './src/title';\nexport default function App() { return <Title />; }\n`,
      {
        'src/title.tsx': `import { Text } from 'react-native';\nimport settings from './app-settings.json';\nexport function Title() { return <Text>{settings.name}</Text>; }\n`,
      },
    );
    expect(await settingsShown(partial)).toEqual(new Set(['name']));
  });
});

describe('a skip answer after the model rewrote App.tsx', () => {
  it('claims no edit the app does not show, and does not suggest --agent host', async () => {
    const said = await skip(workspace(OWN_APP), 'Make it teal, with the subtitle "Daily streaks"');
    const text = said.join('\n');
    expect(text).not.toContain('Edit made');
    expect(text).toContain(
      'Not shown in the app: app name "Habits", accent colour #12a594 (from "teal"), subtitle "Daily streaks"',
    );
    expect(text).toContain('no longer reads src/app-settings.json');
    expect(text).not.toContain('--agent host');
  });

  it('with the template still in place, the same answer names each edit as made', async () => {
    const said = await skip(workspace(), 'Make it teal, with the subtitle "Daily streaks"');
    expect(said).toContain('Edit made: subtitle "Daily streaks".');
    expect(said).toContain('Edit made: accent colour #12a594 (from "teal").');
    expect(said.join('\n')).not.toContain('Not shown');
  });
});
