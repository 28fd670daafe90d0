/**
 * The session card's QR codes (src/mcp/card-qr.ts): the server draws qrcode's module matrix as SVG
 * for the card, which bundles no encoder. The drawing must show exactly the matrix qrcode's own
 * `create` makes for the URL (error correction M, its default), each dark module once, in a quiet
 * zone; a card client's svc_get_session result carries one per deployment URL, and only such a
 * result is changed.
 */
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { CARD_QR_META_KEY, qrPath, qrSvg, withCardQrCodes } from '../../src/mcp/card-qr.js';
import type { ToolResult } from '../../src/mcp/define-tool.js';

/** The modules a path of `M x y h n v1 h -n z` runs paints, as "x,y" (each at most once, or it throws). */
function painted(path: string): Set<string> {
  const cells = new Set<string>();
  for (const run of path.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    const [x, y, width, back] = run.slice(1).map(Number) as [number, number, number, number];
    expect(back).toBe(width);
    for (let i = 0; i < width; i++) {
      const cell = `${x + i},${y}`;
      if (cells.has(cell)) throw new Error(`${cell} painted twice`);
      cells.add(cell);
    }
  }
  expect(path.replace(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g, '')).toBe('');
  return cells;
}

describe('the card QR code', () => {
  it("paints exactly qrcode's matrix for a deployment URL, shifted into a one-module quiet zone", async () => {
    const url = 'https://example-app--deploy-7.expo.app/';
    const { size, data } = QRCode.create(url, {}).modules;
    const expected = new Set<string>();
    for (let i = 0; i < size * size; i++) if (data[i]) expected.add(`${(i % size) + 1},${Math.floor(i / size) + 1}`);
    const svg = await qrSvg(url, 120);
    expect(svg).toContain(`viewBox="0 0 ${size + 2} ${size + 2}"`);
    expect(svg).toContain('width="120" height="120"');
    const dark = svg.match(/<path fill="#000" d="([^"]*)"/)?.[1] ?? '';
    expect(painted(dark)).toEqual(expected);
  });

  it('paints runs that reach the edge of a row, and nothing for a blank row', async () => {
    // 3×3: a full row, a blank row, then a module alone at the right edge.
    expect(qrPath([1, 1, 1, 0, 0, 0, 0, 0, 1], 3, 0)).toBe('M0 0h3v1h-3zM2 2h1v1h-1z');
  });

  it('adds the codes to a svc_get_session result with deployments, and changes no other result', async () => {
    const deployment = 'https://tips--deploy-1.example.test/';
    const session = {
      projectId: 'p1',
      previewUrls: [
        { platform: 'web', kind: 'preview', url: 'https://tips.example.test/' },
        { platform: 'web', kind: 'deployment', url: deployment, deployNumber: 1 },
      ],
    };
    const result: ToolResult = {
      content: [{ type: 'text', text: JSON.stringify(session) }],
      structuredContent: session,
    };
    const card = await withCardQrCodes({ name: 'svc_get_session' }, result);
    expect(card).toEqual({ ...result, _meta: { [CARD_QR_META_KEY]: { [deployment]: await qrSvg(deployment, 120) } } });
    expect(result).not.toHaveProperty('_meta');
    expect(await withCardQrCodes({ name: 'svc_get_project' }, result)).toBe(result);
    const none = { ...result, structuredContent: { ...session, previewUrls: [session.previewUrls[0]] } };
    expect(await withCardQrCodes({ name: 'svc_get_session' }, none)).toBe(none);
  });
});
