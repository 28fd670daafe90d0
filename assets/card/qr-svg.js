// A deployment URL's QR code as SVG markup, for the session card (assets/card/card.js). qrcode's
// encoder (lib/core/qrcode.js: the ISO/IEC 18004 segments, error correction and masking) makes
// the module matrix; this draws it: one path of each row's dark runs, in a one-module quiet zone.
// Only the encoder is bundled, not qrcode's browser entry with its canvas and string renderers.
import { create } from 'qrcode/lib/core/qrcode.js';

/** The dark runs of a `size`×`size` module matrix as SVG path data, offset by `margin` modules. */
export function qrPath(data, size, margin) {
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

/** The SVG markup of `text`'s QR code (error correction level M, qrcode's default), `width` pixels square. */
export function qrSvg(text, width) {
  const { size, data } = create(text, { errorCorrectionLevel: 'M' }).modules;
  const box = size + 2;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${width}" viewBox="0 0 ${box} ${box}" shape-rendering="crispEdges"><path fill="#fff" d="M0 0h${box}v${box}H0z"/><path fill="#000" d="${qrPath(data, size, 1)}"/></svg>`;
}
