/**
 * The static web preview the scripted builder writes: one self-contained HTML page showing the
 * project and the instructions so far, framed like a phone screen. All user text is escaped.
 */
import { escapeHtml } from '../io/html-escape.js';

/** What the preview page shows; every string is escaped when rendered. */
export interface PreviewPageInput {
  projectName: string;
  description: string | null;
  instructions: string[];
  builtAt: string;
  workflowId: string;
}

/** Instructions one page shows at most (the newest), and code points shown of each. */
const PREVIEW_INSTRUCTIONS_SHOWN = 20;
const PREVIEW_INSTRUCTION_CHARS = 500;

/**
 * The page as a string (UTF-8 HTML document). Its size is bounded whatever the history: only the
 * newest PREVIEW_INSTRUCTIONS_SHOWN instructions, each cut to PREVIEW_INSTRUCTION_CHARS code points.
 */
export function renderPreviewPage(input: PreviewPageInput): string {
  const skipped = Math.max(0, input.instructions.length - PREVIEW_INSTRUCTIONS_SHOWN);
  const shown = input.instructions.slice(skipped).map((text, i) => {
    const points = Array.from(text);
    const cut =
      points.length > PREVIEW_INSTRUCTION_CHARS ? `${points.slice(0, PREVIEW_INSTRUCTION_CHARS).join('')}…` : text;
    return `<li><span class="n">${skipped + i + 1}</span>${escapeHtml(cut)}</li>`;
  });
  if (skipped > 0)
    shown.unshift(`<li class="earlier">${skipped} earlier instruction${skipped === 1 ? '' : 's'} not shown</li>`);
  const items = shown.join('\n          ');
  const title = escapeHtml(input.projectName);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · preview</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #eef1f5; }
  .phone { width: 360px; min-height: 640px; border-radius: 36px; background: #fff; color: #111;
           box-shadow: 0 20px 60px rgba(0,0,0,.18); border: 10px solid #111; overflow: hidden; display: flex; flex-direction: column; }
  header { background: #3b5bdb; color: #fff; padding: 28px 20px 18px; }
  header h1 { margin: 0; font-size: 22px; word-break: break-word; }
  header p { margin: 6px 0 0; opacity: .85; font-size: 14px; word-break: break-word; }
  main { padding: 16px 20px; flex: 1; }
  h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: #666; }
  ol { list-style: none; padding: 0; margin: 0; }
  li { padding: 10px 0; border-bottom: 1px solid #eee; font-size: 15px; display: flex; gap: 10px; word-break: break-word; }
  .n { flex: none; width: 22px; height: 22px; border-radius: 11px; background: #e7ecff; color: #3b5bdb; font-size: 12px; display: grid; place-items: center; }
  footer { font-size: 11px; color: #888; padding: 12px 20px 18px; }
</style>
</head>
<body>
  <div class="phone" data-workflow="${escapeHtml(input.workflowId)}">
    <header>
      <h1 id="app-name">${title}</h1>
      ${input.description ? `<p id="app-description">${escapeHtml(input.description)}</p>` : ''}
    </header>
    <main>
      <h2>What this app was asked to do</h2>
      <ol id="instructions">
          ${items}
      </ol>
    </main>
    <footer>Simulated preview by mobile-builder-mcp's scripted builder, built ${escapeHtml(input.builtAt)}. No native code was compiled.</footer>
  </div>
</body>
</html>
`;
}
