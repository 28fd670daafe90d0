/**
 * The console's server-rendered parts: deployments get a QR code and, for iOS and Android, the
 * `exp://` link of their Expo Updates manifest; user text is escaped; links of other schemes are
 * never made links or frames.
 */
import { describe, expect, it } from 'vitest';
import { stateBadge } from '../../src/console/pages.js';
import { renderMessages, renderPreviews, renderSession } from '../../src/console/project-view.js';
import { foldProjectStates, IDLE } from '../../src/services/project-state.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const at = '2026-11-22T09:30:00.000Z';

describe('console previews panel', () => {
  it('links an ios deployment to its exp:// manifest URL with a QR code, and frames the web preview', async () => {
    const html = (
      await renderPreviews(
        [
          {
            url: `http://192.168.1.20:3334/previews/${ID}/`,
            platform: 'web',
            kind: 'preview',
            deployNumber: null,
            workflowId: null,
            createdAt: at,
          },
          {
            url: `http://192.168.1.20:3334/deployments/${ID}/`,
            platform: 'ios',
            kind: 'deployment',
            deployNumber: 1,
            workflowId: null,
            createdAt: at,
          },
          {
            url: `https://builds.example.com/deployments/${ID}/`,
            platform: 'android',
            kind: 'deployment',
            deployNumber: 1,
            workflowId: null,
            createdAt: at,
          },
        ],
        false,
      )
    ).value;
    expect(html).toContain(`href="exp://192.168.1.20:3334/updates/d/${ID}"`);
    expect(html).toContain(`href="exps://builds.example.com/updates/d/${ID}"`);
    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html).toContain(
      `<iframe id="preview-frame" title="Web preview" src="http://192.168.1.20:3334/previews/${ID}/" sandbox="allow-scripts allow-forms allow-same-origin"`,
    );
    expect(html).not.toContain('loopback-hint');
  });

  it('says when native deployment links name the loopback address, which a phone cannot open', async () => {
    const local = (
      await renderPreviews(
        [
          {
            url: `http://127.0.0.1:3334/deployments/${ID}/`,
            platform: 'android',
            kind: 'deployment',
            deployNumber: 1,
            workflowId: null,
            createdAt: at,
          },
        ],
        false,
      )
    ).value;
    expect(local).toContain('id="loopback-hint"');
    expect(local).toContain('--public-url');
    const webOnly = (
      await renderPreviews(
        [
          {
            url: `http://127.0.0.1:3334/deployments/${ID}/`,
            platform: 'web',
            kind: 'deployment',
            deployNumber: 1,
            workflowId: null,
            createdAt: at,
          },
        ],
        false,
      )
    ).value;
    expect(webOnly).not.toContain('loopback-hint');
  });

  it('keeps a same-origin preview out of the console origin, and ignores links that are not http(s)', async () => {
    const same = (
      await renderPreviews(
        [
          {
            url: `http://127.0.0.1:3333/previews/${ID}/`,
            platform: 'web',
            kind: 'preview',
            deployNumber: null,
            workflowId: null,
            createdAt: at,
          },
        ],
        true,
      )
    ).value;
    expect(same).toContain('sandbox="allow-scripts allow-forms"');
    const hostile = (
      await renderPreviews(
        [
          {
            url: 'javascript:alert(1)',
            platform: 'web',
            kind: 'preview',
            deployNumber: null,
            workflowId: null,
            createdAt: at,
          },
          {
            url: 'javascript:alert(2)',
            platform: 'web',
            kind: 'deployment',
            deployNumber: 1,
            workflowId: null,
            createdAt: at,
          },
        ],
        false,
      )
    ).value;
    expect(hostile).not.toContain('javascript:');
    expect(hostile).toContain('No web preview yet');
  });

  it('escapes message text', () => {
    const html = renderMessages([
      {
        id: ID,
        seq: 1,
        role: 'user',
        type: 'instruction',
        content: '<img src=x onerror=alert(1)> & "quotes"',
        workflowId: null,
        createdAt: at,
      },
    ]).value;
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;');
    expect(html).not.toContain('<img');
  });
});

describe('console session panel', () => {
  const workflow = {
    id: ID,
    kind: 'deploy' as const,
    title: 'Ship <it>',
    status: 'waiting_for_input' as const,
    step: { index: 1, total: 3, name: 'Checking <the> build' },
    createdAt: at,
    startedAt: at,
    finishedAt: null,
    error: null,
    previewUrls: [],
    export: null,
  };
  const base = {
    projectId: ID,
    hasActiveWorkflows: true,
    activeWorkflow: workflow,
    queuedWorkflows: [],
    previewUrls: [],
    lastWorkflow: null,
    deployments: [],
    checkpoints: [],
    environment: [],
  };

  it("offers a question's options as required choices, and escapes its prompt", () => {
    const html = renderSession(
      { projectId: ID, csrf: 'c' },
      {
        ...base,
        pendingQuestion: {
          questionId: ID,
          workflowId: ID,
          kind: 'text',
          prompt: 'Pick <one>',
          options: ['iOS & Android', 'web'],
          askedAt: at,
        },
      },
    ).value;
    expect(html).toContain('Pick &lt;one&gt;');
    expect(html).toContain('<input type="radio" name="message" value="iOS &amp; Android" required>');
    expect(html).toContain('<input type="radio" name="message" value="web" required>');
    expect(html).toContain(`<input type="hidden" name="questionId" value="${ID}">`);
    expect(html).toContain('Step 1/3: Checking &lt;the&gt; build');
    expect(html).toContain('<progress max="3" value="1">');
  });

  it('gives a pattern question an input with the pattern, and every form the CSRF token', () => {
    const html = renderSession(
      { projectId: ID, csrf: 'token-1' },
      {
        ...base,
        pendingQuestion: {
          questionId: ID,
          workflowId: ID,
          kind: 'text',
          prompt: 'App id?',
          pattern: '[a-z]+(\\.[a-z]+)+',
          askedAt: at,
        },
      },
    ).value;
    expect(html).toContain('pattern="[a-z]+(\\.[a-z]+)+"');
    expect(html.match(/name="csrf" value="token-1"/g)).toHaveLength(2);
    expect(html).toContain(`action="/projects/${ID}/answer"`);
    expect(html).toContain(`action="/projects/${ID}/cancel"`);
  });
});

describe('projects list state badge', () => {
  const row = (
    projectId: string,
    status: 'queued' | 'running' | 'waiting_for_input' | 'cancelling',
    stepIndex = 0,
    stepTotal = 0,
  ) => ({ projectId, kind: 'build' as const, status, stepIndex, stepTotal, stepName: null });

  it('says idle, the running step, waiting for input, cancelling, and how many are queued', () => {
    const states = foldProjectStates([
      row('a', 'running', 2, 4),
      row('a', 'queued'),
      row('a', 'queued'),
      row('b', 'waiting_for_input', 1, 3),
      row('c', 'queued'),
      row('d', 'cancelling', 1, 2),
      row('e', 'running'),
    ]);
    const text = (id: string) => /<span[^>]*>(.*)<\/span>/.exec(stateBadge(states.get(id) ?? IDLE).value)![1];
    expect(text('a')).toBe('running: build step 2/4 · 2 queued');
    expect(text('b')).toBe('waiting for input');
    expect(text('c')).toBe('1 queued');
    expect(text('d')).toBe('cancelling');
    expect(text('e')).toBe('running: build');
    expect(text('idle')).toBe('idle');
    expect(stateBadge(states.get('a')!).value).toContain('data-state="running" data-queued="2"');
    expect(stateBadge(states.get('c')!).value).toContain('data-state="queued" data-queued="1"');
  });
});
