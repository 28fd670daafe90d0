/**
 * The `none` agent: with no code agent configured, an `expo` build makes only the edits it can
 * make honestly from the instruction's words, in the app's `src/app-settings.json` (which the
 * template's `App.tsx` renders): the app name, an accent colour from a `#hex` or a colour word,
 * dark mode on/off, a subtitle, and the list of instructions shown in the app. Every edit is
 * named in a message, and a last message says plainly what was not done.
 */
import { readFile, writeFile } from 'node:fs/promises';
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
  if (/\b(no|without|disable|turn off|remove)\s+(the\s+)?dark\s+(mode|theme)\b/i.test(instruction) || /\blight\s+(mode|theme)\b/i.test(instruction)) {
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

/** The `none` agent (see the file comment). */
export class DeterministicEdits implements AgentStep {
  readonly mode = 'none' as const;
  readonly stepName = 'Applying the instruction (deterministic edits; no code agent configured)';

  /** @param why the last message's first sentence: why only deterministic edits were made. */
  constructor(private readonly why = 'No code agent is configured on this server, so only deterministic edits were made') {}

  async run({ job, context, workspace }: AgentInput): Promise<AgentOutcome> {
    const file = join(workspace.dir, 'src', 'app-settings.json');
    let settings: AppSettings;
    try {
      settings = JSON.parse(await readFile(file, 'utf8')) as AppSettings;
    } catch {
      settings = { name: job.project.name, subtitle: '', accentColor: '#4630eb', darkMode: false, instructions: [] };
    }
    const done: string[] = [];
    if (settings.name !== job.project.name) {
      settings.name = job.project.name;
      done.push(`app name "${job.project.name}"`);
    }
    const edits = parseEdits(job.instruction);
    if (edits.accentColor && edits.accentColor.value !== settings.accentColor) {
      settings.accentColor = edits.accentColor.value;
      done.push(`accent colour ${edits.accentColor.value}${edits.accentColor.from.startsWith('#') ? '' : ` (from "${edits.accentColor.from}")`}`);
    }
    if (edits.darkMode !== undefined && edits.darkMode !== settings.darkMode) {
      settings.darkMode = edits.darkMode;
      done.push(edits.darkMode ? 'dark mode on' : 'dark mode off');
    }
    if (edits.subtitle !== undefined && edits.subtitle !== settings.subtitle) {
      settings.subtitle = edits.subtitle;
      done.push(`subtitle "${edits.subtitle}"`);
    }
    if (job.kind === 'build' && job.instruction.trim()) {
      const instructions = [...job.history, job.instruction].map((i) => i.trim()).filter(Boolean).slice(-50);
      if (JSON.stringify(instructions) !== JSON.stringify(settings.instructions)) {
        settings.instructions = instructions;
        done.push(`the instruction list shown in the app (${instructions.length} item${instructions.length === 1 ? '' : 's'})`);
      }
    }
    await writeFile(file, `${JSON.stringify(settings, null, 2)}\n`);

    for (const edit of done) context.say(`Edit made: ${edit}.`);
    context.say(
      `${this.why} (app name, accent colour, dark mode, subtitle, the instruction list). ` +
        'Screens, features and logic the instruction asks for were NOT implemented; the app lists the instruction instead. ' +
        'An operator can plug in a code agent with --agent-command, or let the MCP host\'s model write the code with --agent host (see the README).',
    );
    return { summary: done.length ? done.join(', ') : 'no deterministic edit applied' };
  }
}
