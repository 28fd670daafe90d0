/**
 * HTML built by escaping: every value interpolated into the `html` template is escaped unless it
 * is itself `SafeHtml` (the result of another `html` template, or of `raw` for markup we made,
 * such as a QR code's SVG). User text can therefore never become markup (docs/console.md "Web console").
 */
import { escapeHtml } from '../io/html-escape.js';

/** Markup that is already safe to insert. */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** Markup we produced ourselves (never user text). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

function part(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(String(value));
}

/** Tagged template: literal parts are kept, values are escaped (arrays are joined, null/undefined/false dropped). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}
