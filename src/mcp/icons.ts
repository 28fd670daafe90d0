/**
 * The icons hosts show for the server and for each tool (MCP 2025-11-25 "Icons": `icons: [{src,
 * mimeType, sizes}]` on `serverInfo` and on each `tools/list` entry). Each is a small SVG sent as
 * a `data:` URI, so that a host needs no network to show it: a phone outline, with a glyph that
 * says what the tool does. `assets/icon.svg` and `assets/icon-128.png` (the `.mcpb` bundle's
 * icon) are the server's icon as files.
 */

/** One icon as MCP 2025-11-25 defines it. */
export interface Icon {
  src: string;
  mimeType: string;
  sizes: string[];
}

/** The phone outline every icon shares (24x24 viewBox, stroked). */
const PHONE = '<rect x="6" y="2" width="12" height="20" rx="2.5"/><path d="M10.5 19h3"/>';

/** Each tool's glyph, drawn inside the phone's screen. */
const GLYPHS: Record<string, string> = {
  svc_list_projects: '<path d="M9 7h6M9 10.5h6M9 14h6"/>',
  svc_get_project: '<rect x="9" y="6.5" width="6" height="7" rx="1"/>',
  svc_create_project: '<path d="M12 7v7M8.5 10.5h7"/>',
  svc_send_message: '<path d="M9 13.5l6-3.5-6-3.5v2.5l3.5 1-3.5 1z"/>',
  svc_get_session: '<circle cx="12" cy="10.5" r="3.5"/><path d="M12 8.5v2l1.5 1"/>',
  svc_get_messages: '<path d="M8.5 7.5h7v5h-4l-2 1.5v-1.5h-1z"/>',
  svc_cancel_workflow: '<path d="M9.5 8l5 5M14.5 8l-5 5"/>',
};

/** The server's glyph: a hammer's head and handle on the screen (it builds apps). */
const SERVER_GLYPH = '<path d="M9 8.5h5l1 1.5h-6zM12 10v5"/>';

/** An SVG icon of `glyph` in the phone, as a `data:` URI icon. */
function svgIcon(glyph: string): Icon[] {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#1f6feb" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round">${PHONE}${glyph}</svg>`;
  return [
    {
      src: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
      mimeType: 'image/svg+xml',
      sizes: ['any'],
    },
  ];
}

/** The server's icons (`serverInfo.icons`). */
export const SERVER_ICONS: Icon[] = svgIcon(SERVER_GLYPH);

/** The icons of tool `name` (`tools/list`); the server's for a tool without a glyph of its own. */
export function toolIcons(name: string): Icon[] {
  const glyph = GLYPHS[name];
  return glyph ? svgIcon(glyph) : SERVER_ICONS;
}
