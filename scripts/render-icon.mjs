// `node scripts/render-icon.mjs` (after `npm run build`): writes the server's icon as files,
// assets/icon.svg and assets/icon-128.png (the `.mcpb` bundle's icon, docs/hosts.md "More ways
// to connect"), from the SVG the server sends hosts (src/mcp/icons.ts), rendered by headless Chromium.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { SERVER_ICONS } = await import(join(root, 'dist', 'mcp', 'icons.js'));
const svg = Buffer.from(SERVER_ICONS[0].src.split(',')[1], 'base64').toString('utf8');
writeFileSync(join(root, 'assets', 'icon.svg'), `${svg}\n`);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(
    `<html><body style="margin:0;background:transparent">${svg.replace('<svg ', '<svg width="128" height="128" ')}</body></html>`,
  );
  writeFileSync(join(root, 'assets', 'icon-128.png'), await page.screenshot({ omitBackground: true }));
} finally {
  await browser.close();
}
console.log('assets/icon.svg, assets/icon-128.png');
