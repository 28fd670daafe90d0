/**
 * The console's plain-text refusals (docs/architecture.md "The HTTP pipeline"): a method a page
 * does not take, and a form that cannot be read.
 */
import type { ServerResponse } from 'node:http';

/** 405 with `Allow: GET, HEAD, POST`, as text. */
export function methodNotAllowed(res: ServerResponse): void {
  res.writeHead(405, {
    Allow: 'GET, HEAD, POST',
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end('Method not allowed\n');
}

/** 413 (over 256 KiB) or 415 (not urlencoded) as text, closing the connection; an aborted upload is dropped. */
export function badForm(res: ServerResponse, problem: 'too_large' | 'unsupported' | 'aborted'): void {
  if (problem === 'aborted') return void res.destroy();
  const status = problem === 'too_large' ? 413 : 415;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(
    problem === 'too_large' ? 'The form is too large.\n' : 'Send the form as application/x-www-form-urlencoded.\n',
  );
}
