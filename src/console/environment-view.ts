/**
 * The project page's Environment section (docs/console.md; docs/security.md "Project environment"):
 * the project's variables for its owner alone, with a form to set one (plain or secret) and a
 * Remove button per variable. A secret's value is never shown, nor sent back in the form.
 */
import type { EnvEntry } from '../services/project-env.js';
import { html, type SafeHtml } from './html.js';

/** The section's markup; `error` is the last set or remove's refusal, shown under the form. */
export function renderEnvironment(
  projectId: string,
  csrf: string,
  entries: readonly EnvEntry[],
  error?: SafeHtml,
): SafeHtml {
  const action = `/projects/${projectId}/env`;
  const rows = entries.map(
    (e) =>
      html`<tr><td><code>${e.name}</code></td><td>${e.secret ? 'secret' : 'plain'}</td><td>${
        e.secret ? html`<span class="meta">hidden</span>` : html`<code>${e.value}</code>`
      }</td><td><form method="post" action="${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="op" value="unset"><input type="hidden" name="name" value="${e.name}"><button type="submit" data-action="unset-env">Remove</button></form></td></tr>`,
  );
  const list =
    entries.length === 0
      ? html`<p class="meta">No variables. EXPO_PUBLIC_* ones reach the app; secrets reach only the build's own processes.</p>`
      : html`<table id="env-list"><thead><tr><th>Name</th><th>Kind</th><th>Value</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
  return html`<section aria-labelledby="env-title"><h2 id="env-title">Environment</h2>${list}
<form method="post" action="${action}" class="card" id="env-set" autocomplete="off">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="op" value="set">
<label for="env-name">Name</label><input id="env-name" name="name" required maxlength="128" pattern="[A-Za-z_][A-Za-z0-9_]*">
<label for="env-value">Value</label><input id="env-value" name="value" type="password" maxlength="32768">
<label class="option"><input type="checkbox" name="secret" value="yes"> secret (never shown again, never in the app)</label>
${error ?? ''}<button type="submit" id="env-set-button">Set</button>
</form></section>`;
}
