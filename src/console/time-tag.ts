/**
 * Times as the console shows them: a `<time>` whose text is the exact UTC minute
 * (`2026-11-23 14:05 UTC`), readable without script, and whose `datetime` carries the instant.
 * The console's script turns each into a relative time (`3 min ago`) with the exact time, in the
 * browser's time zone, on hover (`title`).
 */
import { html, type SafeHtml } from './html.js';

/** `2026-11-23T14:05:09.123Z` -> `2026-11-23 14:05 UTC`; text that is not such a timestamp is kept. */
function utcMinute(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/** `<time datetime="ISO" title="… UTC">2026-11-23 14:05 UTC</time>` (see above). */
export function timeTag(iso: string): SafeHtml {
  const exact = iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  return html`<time datetime="${iso}" title="${exact}">${utcMinute(iso)}</time>`;
}
