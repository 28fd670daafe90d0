/**
 * The session card's QR codes (assets/card/qr-svg.js): the card bundles only qrcode's encoder and
 * draws its module matrix itself. The drawing must show exactly the matrix qrcode's own `create`
 * makes for the URL (error correction M, its default), each dark module once, in a quiet zone.
 */
import QRCode from 'qrcode';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

type QrSvgModule = {
  qrPath: (data: ArrayLike<number>, size: number, margin: number) => string;
  qrSvg: (text: string, width: number) => string;
};
const load = async (): Promise<QrSvgModule> =>
  (await import(pathToFileURL(join(ROOT, 'assets/card/qr-svg.js')).href)) as QrSvgModule;

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
    const { qrSvg } = await load();
    const url = 'https://example-app--deploy-7.expo.app/';
    const { size, data } = QRCode.create(url, {}).modules;
    const expected = new Set<string>();
    for (let i = 0; i < size * size; i++) if (data[i]) expected.add(`${(i % size) + 1},${Math.floor(i / size) + 1}`);
    const svg = qrSvg(url, 120);
    expect(svg).toContain(`viewBox="0 0 ${size + 2} ${size + 2}"`);
    expect(svg).toContain('width="120" height="120"');
    const dark = svg.match(/<path fill="#000" d="([^"]*)"/)?.[1] ?? '';
    expect(painted(dark)).toEqual(expected);
  });

  it('paints runs that reach the edge of a row, and nothing for a blank row', async () => {
    const { qrPath } = await load();
    // 3×3: a full row, a blank row, then a module alone at the right edge.
    expect(qrPath([1, 1, 1, 0, 0, 0, 0, 0, 1], 3, 0)).toBe('M0 0h3v1h-3zM2 2h1v1h-1z');
  });
});
