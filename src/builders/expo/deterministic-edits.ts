/**
 * The `none` agent: with no code agent configured, an `expo` build makes only the edits it can
 * make honestly from the instruction's words, in the app's `src/app-settings.json` (which the
 * template's `App.tsx` renders): the app name, an accent colour from a `#hex` or a colour word,
 * dark mode on/off, a subtitle, and the list of instructions shown in the app. Every edit is
 * named in a message, and a last message says plainly what was not done.
 *
 * The same step runs when a code question of the host agent is answered `skip`. By then the
 * host's model may have rewritten `App.tsx`, and the app may no longer read the settings file (or
 * only some of its fields): an edit is then still written to the file but is reported as not
 * shown, never as made (`settingsShown`).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentInput, AgentOutcome, AgentStep } from './agent-step.js';

/** The content of the template's `src/app-settings.json`. */
interface AppSettings {
  name: string;
  subtitle: string;
  accentColor: string;
  darkMode: boolean;
  instructions: string[];
}

/** Colour words understood in instructions, with the hex value used. */
const COLOUR_WORDS: Record<string, string> = {
  red: '#e5484d',
  orange: '#f76b15',
  amber: '#ffb224',
  yellow: '#f5d90a',
  lime: '#99d52a',
  green: '#30a46c',
  mint: '#3dd9b0',
  teal: '#12a594',
  cyan: '#05a2c2',
  blue: '#0d74ce',
  indigo: '#3e63dd',
  violet: '#6e56cf',
  purple: '#8e4ec6',
  magenta: '#d6409f',
  pink: '#e93d82',
  brown: '#ad7f58',
  gray: '#6f6e77',
  grey: '#6f6e77',
  black: '#111111',
};

/** How the last message names each field. */
const FIELD_LABELS: Record<keyof AppSettings, string> = {
  name: 'app name',
  subtitle: 'subtitle',
  accentColor: 'accent colour',
  darkMode: 'dark mode',
  instructions: 'the instruction list',
};

/** The edits an instruction asks for (fields absent when it asks for none). */
export interface RequestedEdits {
  accentColor?: { value: string; from: string };
  darkMode?: boolean;
  subtitle?: string;
}

/** Reads the deterministic edits out of one instruction. */
export function parseEdits(instruction: string): RequestedEdits {
  const edits: RequestedEdits = {};
  const hex = /(^|[^\w&])#([0-9a-f]{6}|[0-9a-f]{3})\b/i.exec(instruction);
  if (hex) edits.accentColor = { value: `#${hex[2]!.toLowerCase()}`, from: `#${hex[2]}` };
  else {
    const words = Object.keys(COLOUR_WORDS).join('|');
    const word = new RegExp(`\\b(${words})\\b`, 'i').exec(instruction);
    if (word) edits.accentColor = { value: COLOUR_WORDS[word[1]!.toLowerCase()]!, from: word[1]!.toLowerCase() };
  }
  if (
    /\b(no|without|disable|turn off|remove)\s+(the\s+)?dark\s+(mode|theme)\b/i.test(instruction) ||
    /\blight\s+(mode|theme)\b/i.test(instruction)
  ) {
    edits.darkMode = false;
  } else if (/\bdark\s+(mode|theme)\b/i.test(instruction) || /\bmake it dark\b/i.test(instruction)) {
    edits.darkMode = true;
  }
  const quoted = /\bsubtitle\b[^"“'‘\n]{0,20}["“'‘]([^"”'’\n]{1,120})["”'’]/i.exec(instruction);
  const plain = /\bsubtitle\s*(?:to|:|=|is|reads?|saying)\s*([^.\n!?]{1,120})/i.exec(instruction);
  const subtitle = (quoted?.[1] ?? plain?.[1])?.trim();
  if (subtitle) edits.subtitle = subtitle;
  return edits;
}

/** A field of `src/app-settings.json`. */
type SettingsField = keyof AppSettings;
const SETTINGS_FIELDS: readonly SettingsField[] = ['name', 'subtitle', 'accentColor', 'darkMode', 'instructions'];

/** Longest source file read when looking for the settings' readers (bytes). */
const MAX_SOURCE_BYTES = 1_000_000;

/**
 * The fields of `src/app-settings.json` that the app's code reads: a field counts when a source
 * file (`App.tsx`, `src/**` `.ts`/`.tsx`) that imports or requires `app-settings.json` names it.
 * The template's `App.tsx` reads them all; an app whose code no longer imports the file reads none.
 */
export async function settingsShown(workspaceDir: string): Promise<Set<SettingsField>> {
  const files = ['App.tsx', ...(await sourceFiles(workspaceDir, 'src'))];
  const shown = new Set<SettingsField>();
  for (const file of files) {
    const text = await readFile(join(workspaceDir, file), 'utf8').catch(() => '');
    if (
      text.length > MAX_SOURCE_BYTES ||
      !/(?:from\s*|require\(\s*|import\(\s*)['"][^'"]*app-settings(?:\.json)?['"]/.test(text)
    )
      continue;
    for (const field of SETTINGS_FIELDS) if (new RegExp(`\\b${field}\\b`).test(text)) shown.add(field);
  }
  return shown;
}

/** `.ts`/`.tsx` files under `dir` (relative to `root`), depth-first, at most 500. */
async function sourceFiles(root: string, dir: string, found: string[] = []): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (found.length >= 500) break;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'))
      await sourceFiles(root, path, found);
    else if (entry.isFile() && /\.tsx?$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** Why only deterministic edits run, and what the last message suggests instead. */
interface DeterministicReason {
  /** The last message's first sentence: why only deterministic edits were made. */
  why: string;
  /** What would change the app's code (differs when the host's model is already the agent). */
  instead: string;
}

const NO_AGENT: DeterministicReason = {
  why: 'No code agent is configured on this server, so only deterministic edits were made',
  instead:
    "An operator can plug in a code agent with --agent-command, or let the MCP host's model write the code with --agent host (see docs/builders.md).",
};

/** The `none` agent (see the file comment). */
export class DeterministicEdits implements AgentStep {
  readonly mode = 'none' as const;
  readonly stepName = 'Applying the instruction (deterministic edits; no code agent configured)';

  constructor(private readonly reason: DeterministicReason = NO_AGENT) {}

  async run({ job, context, workspace }: AgentInput): Promise<AgentOutcome> {
    const file = join(workspace.dir, 'src', 'app-settings.json');
    let settings: AppSettings;
    try {
      settings = JSON.parse(await readFile(file, 'utf8')) as AppSettings;
    } catch {
      settings = { name: job.project.name, subtitle: '', accentColor: '#4630eb', darkMode: false, instructions: [] };
    }
    const done: Array<{ field: SettingsField; text: string }> = [];
    if (settings.name !== job.project.name) {
      settings.name = job.project.name;
      done.push({ field: 'name', text: `app name "${job.project.name}"` });
    }
    const edits = parseEdits(job.instruction);
    if (edits.accentColor && edits.accentColor.value !== settings.accentColor) {
      settings.accentColor = edits.accentColor.value;
      done.push({
        field: 'accentColor',
        text: `accent colour ${edits.accentColor.value}${edits.accentColor.from.startsWith('#') ? '' : ` (from "${edits.accentColor.from}")`}`,
      });
    }
    if (edits.darkMode !== undefined && edits.darkMode !== settings.darkMode) {
      settings.darkMode = edits.darkMode;
      done.push({ field: 'darkMode', text: edits.darkMode ? 'dark mode on' : 'dark mode off' });
    }
    if (edits.subtitle !== undefined && edits.subtitle !== settings.subtitle) {
      settings.subtitle = edits.subtitle;
      done.push({ field: 'subtitle', text: `subtitle "${edits.subtitle}"` });
    }
    if (job.kind === 'build' && job.instruction.trim()) {
      const instructions = [...job.history, job.instruction]
        .map((i) => i.trim())
        .filter(Boolean)
        .slice(-50);
      if (JSON.stringify(instructions) !== JSON.stringify(settings.instructions)) {
        settings.instructions = instructions;
        done.push({
          field: 'instructions',
          text: `the instruction list shown in the app (${instructions.length} item${instructions.length === 1 ? '' : 's'})`,
        });
      }
    }
    await writeFile(file, `${JSON.stringify(settings, null, 2)}\n`);

    const shownFields = await settingsShown(workspace.dir);
    const shown = done.filter((d) => shownFields.has(d.field));
    const hidden = done.filter((d) => !shownFields.has(d.field));
    for (const edit of shown) await context.say(`Edit made: ${edit.text}.`);
    if (hidden.length > 0) {
      await context.say(
        `Not shown in the app: ${hidden.map((d) => d.text).join(', ')}. ` +
          (shownFields.size === 0
            ? "The app's code no longer reads src/app-settings.json, so these values were recorded there but the built app does not change."
            : "The app's code does not read these fields of src/app-settings.json, so the built app does not change for them."),
      );
    }
    const kinds = SETTINGS_FIELDS.filter((f) => shownFields.has(f)).map((f) => FIELD_LABELS[f]);
    await context.say(
      `${this.reason.why}${kinds.length > 0 ? ` (what this app shows of them: ${kinds.join(', ')})` : ", and this app's code shows none of them"}. ` +
        `Screens, features and logic the instruction asks for were NOT implemented${shownFields.has('instructions') ? '; the app lists the instruction instead' : ''}. ` +
        this.reason.instead,
    );
    return { summary: shown.length ? shown.map((d) => d.text).join(', ') : 'no edit the app shows' };
  }
}
