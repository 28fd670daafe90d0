/**
 * What the console says about MCP hosts (docs/console.md "Web console"): the console follows and steers
 * work that an MCP host does, so its front page says so with the lines that connect a host, and a
 * code question (addressed to the host's model, docs/builders.md "Code questions") is shown to a person as
 * "waiting for code from your MCP host": what to do, how to connect a host, the prompt folded, and
 * what `skip` does.
 */
import type { PendingQuestion, WorkflowView } from '../services/resource-shapes.js';
import { html, type SafeHtml } from './html.js';

/** The lines that connect an MCP host to this server's `/mcp` (`mcpUrl`) with an API token. */
function connectLines(mcpUrl: string): SafeHtml {
  const config = JSON.stringify(
    { mcpServers: { 'mobile-builder': { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer svc_...' } } } },
    null,
    2,
  );
  return html`<p>Claude Code:</p>
<pre class="connect-lines" id="connect-claude-code"><code>claude mcp add --transport http mobile-builder ${mcpUrl} --header "Authorization: Bearer svc_..."</code></pre>
<p>A host with a JSON file of MCP servers (Claude Desktop through <code>mcp-remote</code>, VS Code, Cursor):</p>
<pre class="connect-lines" id="connect-json"><code>${config}</code></pre>
<p class="hint">Replace <code>svc_...</code> with one of your API tokens (<code>mobile-builder-mcp token create --user NAME</code>). The README's "Connect an MCP host" and docs/hosts.md have every host, stdio and the <code>.mcpb</code> bundle.</p>`;
}

/**
 * The front page's first section (`#about`): what the console is, and how to connect a host.
 * @param open whether the connect lines show unfolded (a visitor with no project yet).
 */
export function consoleIntro(mcpUrl: string, open: boolean): SafeHtml {
  return html`<section id="about" class="about" aria-labelledby="about-title">
<h2 id="about-title">What this console is</h2>
<p>This console follows and steers the work an MCP host does with mobile-builder-mcp. The host's model (Claude Code, Claude Desktop, VS Code, …) creates projects, builds and deploys them through this server's tools, and writes the app's code when the building agent asks for it. Here you watch each build, open its previews, answer the agent's questions, send instructions and cancel work.</p>
<details id="connect"${open ? html` open` : ''}><summary>Connect an MCP host</summary>${connectLines(mcpUrl)}</details>
</section>`;
}

/** What `codeQuestionBox` shows. */
export interface CodeQuestionBox {
  question: PendingQuestion;
  /** The workflow that asked, named in the instruction when known. */
  workflow: WorkflowView | null;
  /** The server's MCP URL for the connection guide; absent, no guide. */
  mcpUrl: string | undefined;
  /** The answer form's opening tag and hidden fields (the caller's, with its CSRF token). */
  form: SafeHtml;
  /** The answer's error, shown above the skip button. */
  error: SafeHtml | undefined;
}

/**
 * A pending code question in the session panel: it waits for the MCP host's model, so the person
 * is told what to do (ask the host), how to connect one, what `skip` does; the prompt is folded.
 */
export function codeQuestionBox({ question, workflow, mcpUrl, form, error }: CodeQuestionBox): SafeHtml {
  const lines = question.prompt.split('\n').length;
  return html`<section id="question" class="question code-question" data-kind="code" aria-labelledby="question-title">
<h3 id="question-title">Waiting for code from your MCP host</h3>
<p class="instruction">The building agent asked the MCP host's model to write the app's code${workflow ? html` for “${workflow.title}”` : ''}. A person does not answer this one: in your MCP host (connected to this server with your token), ask its model to <strong>answer the pending code question</strong> of this project. It reads the prompt with <code>svc_get_session</code> and answers with <code>svc_send_message</code>; this page follows.</p>
${mcpUrl ? html`<details class="connect"><summary>How to connect an MCP host</summary>${connectLines(mcpUrl)}</details>` : ''}
<details class="prompt-box"><summary>The prompt the model gets (${lines} line${lines === 1 ? '' : 's'})</summary><div class="prompt">${question.prompt}</div></details>
${form}<input type="hidden" name="message" value="skip">${error ?? ''}<p class="hint" id="skip-hint">No host at hand? <strong>Skip</strong> answers <code>skip</code>: the build goes on without the model's code, with only the deterministic edits the instruction allows (the app may not change).</p>
<button type="submit" data-action="skip">Skip: build without the model's code</button></form>
</section>`;
}
