/**
 * The HTTP transport's guards (docs/architecture.md "The HTTP pipeline"): `hostCheck` (and its
 * `Host only` and artifact variants), `formOrigin`, `protocolVersion` and `bodyLimit`. A refusal
 * reads and drops the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { forbidden, invalidRequest } from '../errors.js';
import type { PublicUrl } from '../services/public-url.js';
import { formFromOwnOrigin } from './form-origin.js';
import type { HostVerdict } from './host-check.js';
import { guard, type Guard } from '../io/route-guard.js';
import type { ListenerHosts } from './listener-hosts.js';
import { bodyTooLarge, PROTOCOL_VERSIONS, sendError } from './mcp-replies.js';

/** The transport's guards of one listener. */
export interface TransportGuards {
  /** `Host`, and `Origin` when sent, name this server (DNS rebinding, host-check.ts). */
  hostAndOrigin: Guard;
  /** `Host` only: browsers and web-based MCP hosts call the OAuth routes cross-origin (CORS). */
  hostOnly: Guard;
  /** `Host` names this server or the artifact base (`--artifact-url`). */
  artifactHost: Guard;
  /** A form that changes something (any method but GET and HEAD) comes from this server's own origin (form-origin.ts). */
  formOrigin: Guard;
  /** MCP streamable HTTP: a client names the negotiated version on every request after initialize; an unknown one is 400. */
  protocolVersion: Guard;
  /** A declared `Content-Length` over the limit is 413 before anything is read (the reader refuses a longer streamed body). */
  bodyLimit: Guard;
}

/** The guards of a listener with host checks `hosts`, public URL `publicUrl` and body limit `bodyLimit` (bytes). */
export function transportGuards(
  hosts: ListenerHosts,
  publicUrl: Pick<PublicUrl, 'get'>,
  bodyLimit: number,
): TransportGuards {
  return {
    hostAndOrigin: guard('hostCheck', (req, res) =>
      refuse(req, res, hosts.check(req.headers.host, req.headers.origin)),
    ),
    hostOnly: guard('hostCheck(Host only)', (req, res) => refuse(req, res, hosts.check(req.headers.host, undefined))),
    artifactHost: guard('artifactHostCheck', (req, res) =>
      refuse(req, res, hosts.artifactCheck(req.headers.host, undefined)),
    ),
    formOrigin: guard('formOrigin', (req, res) => {
      if (
        req.method === 'GET' ||
        req.method === 'HEAD' ||
        formFromOwnOrigin(req.headers.origin, req.headers.host, publicUrl.get())
      )
        return true;
      return refuse(req, res, 'origin_not_allowed');
    }),
    protocolVersion: guard('protocolVersion', (req, res) => {
      const version = req.headers['mcp-protocol-version'];
      if (typeof version !== 'string' || PROTOCOL_VERSIONS.includes(version)) return true;
      sendError(res, invalidRequest({ reason: 'unsupported MCP-Protocol-Version', supported: PROTOCOL_VERSIONS }));
      return false;
    }),
    bodyLimit: guard('bodyLimit', (req, res) => {
      const declared = Number(req.headers['content-length']);
      if (!Number.isFinite(declared) || declared <= bodyLimit) return true;
      req.resume();
      bodyTooLarge(res, bodyLimit);
      return false;
    }),
  };
}

/** True for `ok`; else 403 with the verdict as the reason, the body read and dropped. */
function refuse(req: IncomingMessage, res: ServerResponse, verdict: HostVerdict): boolean {
  if (verdict === 'ok') return true;
  req.resume();
  sendError(res, forbidden({ reason: verdict }));
  return false;
}
