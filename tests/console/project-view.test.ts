/**
 * The console's server-rendered parts: deployments get a QR code and, for iOS and Android, the
 * `exp://` link of their Expo Updates manifest; user text is escaped; links of other schemes are
 * never made links or frames.
 */
import { describe, expect, it } from 'vitest';
import { renderMessages, renderPreviews } from '../../src/console/project-view.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const at = '2026-11-22T09:30:00.000Z';

describe('console previews panel', () => {
  it('links an ios deployment to its exp:// manifest URL with a QR code, and frames the web preview', async () => {
    const html = (
      await renderPreviews(
        [
          { url: `http://192.168.1.20:3334/previews/${ID}/`, platform: 'web', kind: 'preview', workflowId: null, createdAt: at },
          { url: `http://192.168.1.20:3334/deployments/${ID}/`, platform: 'ios', kind: 'deployment', workflowId: null, createdAt: at },
          { url: `https://builds.example.com/deployments/${ID}/`, platform: 'android', kind: 'deployment', workflowId: null, createdAt: at },
        ],
        false,
      )
    ).value;
    expect(html).toContain(`href="exp://192.168.1.20:3334/updates/d/${ID}"`);
    expect(html).toContain(`href="exps://builds.example.com/updates/d/${ID}"`);
    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html).toContain(`<iframe id="preview-frame" title="Web preview" src="http://192.168.1.20:3334/previews/${ID}/" sandbox="allow-scripts allow-forms allow-same-origin"`);
  });

  it('keeps a same-origin preview out of the console origin, and ignores links that are not http(s)', async () => {
    const same = (await renderPreviews([{ url: `http://127.0.0.1:3333/previews/${ID}/`, platform: 'web', kind: 'preview', workflowId: null, createdAt: at }], true)).value;
    expect(same).toContain('sandbox="allow-scripts allow-forms"');
    const hostile = (
      await renderPreviews(
        [
          { url: 'javascript:alert(1)', platform: 'web', kind: 'preview', workflowId: null, createdAt: at },
          { url: 'javascript:alert(2)', platform: 'web', kind: 'deployment', workflowId: null, createdAt: at },
        ],
        false,
      )
    ).value;
    expect(hostile).not.toContain('javascript:');
    expect(hostile).toContain('No web preview yet');
  });

  it('escapes message text', () => {
    const html = renderMessages([{ id: ID, seq: 1, role: 'user', type: 'instruction', content: '<img src=x onerror=alert(1)> & "quotes"', workflowId: null, createdAt: at }]).value;
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;');
    expect(html).not.toContain('<img');
  });
});
