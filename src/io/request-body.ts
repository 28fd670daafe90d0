/**
 * The one reader of request bodies outside express (the `/mcp` messages and the web console's
 * forms; the OAuth routes use express's parsers): the whole body as UTF-8 text, up to a limit in
 * bytes, refused as soon as it is known to be larger (the declared `Content-Length`, or the bytes
 * received so far), without keeping what arrived.
 */
import type { IncomingMessage } from 'node:http';

/** The body is larger than the limit (the rest of it is read and dropped). */
export const BODY_TOO_LARGE = Symbol('body too large');
/** The client went away (or the connection failed) before the body ended. */
export const BODY_ABORTED = Symbol('body aborted');

/** What `readBody` gives: the text, or why there is none. */
export type BodyText = string | typeof BODY_TOO_LARGE | typeof BODY_ABORTED;

/**
 * Reads `req`'s body as UTF-8 text of at most `limitBytes` bytes. Never rejects.
 * @returns the text; `BODY_TOO_LARGE` when the declared or received length exceeds the limit;
 *   `BODY_ABORTED` when the request ended early. What is known at once (a declared length over
 *   the limit, or a body already received whole, as a small body sent with its headers is) is the
 *   value itself, not a promise.
 */
export function readBody(req: IncomingMessage, limitBytes: number): BodyText | Promise<BodyText> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    return BODY_TOO_LARGE;
  }
  // Received whole already (the parser saw the message's end): taken from the stream's buffer at once.
  if (req.complete && !req.readableFlowing && req.readableLength > 0 && req.readableLength <= limitBytes) {
    const whole = req.read() as Buffer | null;
    if (whole) return whole.toString('utf8');
  }
  // Four listeners and no other closure: this runs for every MCP request. `resolve` takes the first value only.
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limitBytes) {
        over = true;
        chunks.length = 0;
        resolve(BODY_TOO_LARGE);
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', () => resolve(BODY_ABORTED));
    req.on('close', () => {
      if (!req.complete) resolve(BODY_ABORTED);
    });
  });
}
