/**
 * The session card's QR codes (docs/contract.md#app-card): a `svc_get_session` result answered to a
 * client that declared the MCP Apps extension carries in its `_meta`, under `CARD_QR_META_KEY`, the
 * QR code of each deployment URL of its `previewUrls` as SVG markup, which the card shows as it is
 * (the card bundles no QR encoder: it stays small). Other clients' results are not touched.
 *
 * qrcode's encoder (`QRCode.create`: the ISO/IEC 18004 segments, error correction M, masking) makes
 * the module matrix; this draws it: one path of each row's dark runs, in a one-module quiet zone.
 */
import type { ToolResult } from './define-tool.js';

/** The `_meta` key of a card client's `svc_get_session` result: `{ [deploymentUrl]: svgMarkup }`. */
export const CARD_QR_META_KEY = 'io.github.mobile-builder-mcp/deploymentQrCodes';

/** The tool whose results the card shows. */
const CARD_TOOL = 'svc_get_session';

/** The card's QR code width, in CSS pixels. */
const QR_WIDTH = 120;

/** Drawn codes by URL, the oldest dropped past `DRAWN_MAX` (the card asks again at every wait). */
const drawn = new Map<string, string | null>();
const DRAWN_MAX = 256;

/** The dark runs of a `size`×`size` module matrix as SVG path data, offset by `margin` modules. */
export function qrPath(data: ArrayLike<number>, size: number, margin: number): string {
  let path = '';
  for (let row = 0; row < size; row++) {
    let col = 0;
    while (col < size) {
      if (!data[row * size + col]) {
        col++;
        continue;
      }
      const start = col;
      while (col < size && data[row * size + col]) col++;
      path += `M${start + margin} ${row + margin}h${col - start}v1h${start - col}z`;
    }
  }
  return path;
}

/**
 * The SVG markup of `text`'s QR code (error correction level M, qrcode's default), `width` pixels square.
 * @throws Error from qrcode when `text` is too long for a QR code.
 */
export async function qrSvg(text: string, width: number): Promise<string> {
  const { default: QRCode } = await import('qrcode');
  const { size, data } = QRCode.create(text, { errorCorrectionLevel: 'M' }).modules;
  const box = size + 2;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${width}" viewBox="0 0 ${box} ${box}" shape-rendering="crispEdges"><path fill="#fff" d="M0 0h${box}v${box}H0z"/><path fill="#000" d="${qrPath(data, size, 1)}"/></svg>`;
}

/** `url`'s drawn code, or null when it is too long for one (the card then shows the link alone). */
async function drawnFor(url: string): Promise<string | null> {
  let svg = drawn.get(url);
  if (svg !== undefined) return svg;
  try {
    svg = await qrSvg(url, QR_WIDTH);
  } catch {
    svg = null;
  }
  if (drawn.size >= DRAWN_MAX) drawn.delete(drawn.keys().next().value!);
  drawn.set(url, svg);
  return svg;
}

/**
 * `result` of the `tools/call` whose `params` are given, as a client with the MCP Apps extension
 * gets it: a `svc_get_session` result with deployments also carries their QR codes in
 * `_meta[CARD_QR_META_KEY]`; any other result (another tool, no deployment) is returned as it is.
 */
export async function withCardQrCodes(params: unknown, result: ToolResult): Promise<ToolResult> {
  if ((params as { name?: unknown } | undefined)?.name !== CARD_TOOL) return result;
  const previews = (result.structuredContent as { previewUrls?: Array<{ kind?: unknown; url?: unknown }> }).previewUrls;
  const urls = (previews ?? []).filter((p) => p.kind === 'deployment' && typeof p.url === 'string');
  if (urls.length === 0) return result;
  const codes: Record<string, string> = {};
  for (const { url } of urls) {
    const svg = await drawnFor(url as string);
    if (svg !== null) codes[url as string] = svg;
  }
  const own = result._meta as Record<string, unknown> | undefined;
  return { ...result, _meta: { ...own, [CARD_QR_META_KEY]: codes } };
}
