/**
 * The part of each tool description that tells a model what an error means and what to do.
 * Hosts show a model `error.message` (fixed by the contract, docs/contract.md#errors) and often drop
 * `error.data`, so the meaning of each code for each tool lives in the description, which the
 * model does see.
 */

/** -32001, the same for every tool. */
const AUTH_ERROR =
  '-32001: check the message. "Authentication failed - invalid or expired API key" is this server\'s: the API token is missing, invalid, expired or revoked; retrying will not help, ask the user to configure a valid token (mobile-builder-mcp token create). "Request timed out" is your MCP client\'s own timeout, not a token problem: call again (a wait with a shorter waitSeconds).';

/** -32005 for the request rate, the same for every tool. */
const RATE_ERROR =
  '-32005 with error.data.scope "requests": this API key made more tool calls this minute than its plan allows. Nothing was done. Wait error.data.retryAfterSeconds seconds (60 if you cannot see error.data), then repeat the same call. scope "server" means the server is busy: wait a second and repeat.';

/** -32603, the same for every tool. */
const INTERNAL_ERROR = '-32603: a fault in the server. Try once more a little later; if it persists, tell the user.';

/** An errors section: one line per code, specific codes first, then the ones every tool shares. */
export function errorGuide(specific: string[]): string {
  return [
    'Errors (error.code: meaning and what to do):',
    ...[...specific, AUTH_ERROR, RATE_ERROR, INTERNAL_ERROR].map((line) => `- ${line}`),
  ].join('\n');
}
