/**
 * Which kind an instruction starts when `svc_send_message` gets no `kind` (docs/contract.md "Tools"): a
 * deploy only when the message begins, after an optional "please", with deploy, publish, release
 * or ship used as a verb, not negated. The table is the rule; the last test runs it through a
 * real SDK client and reads the chosen kind in the response.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferKind } from '../src/services/instruction-kind.js';
import { httpClient, startTestServer, type TestServer } from './helpers.js';

const TABLE: Array<[string, 'build' | 'deploy']> = [
  // Imperative requests to deploy.
  ['Deploy it', 'deploy'],
  ['deploy', 'deploy'],
  ['Deploy!', 'deploy'],
  ['Please publish to the stores', 'deploy'],
  ['please, deploy the latest build', 'deploy'],
  ['Ship it', 'deploy'],
  ['Ship it to TestFlight, then tell me the link', 'deploy'],
  ['Release version 2.0 to production', 'deploy'],
  ['Publish the app', 'deploy'],
  ['  DEPLOY to the web now.', 'deploy'],
  ["Deploy it, but don't change the icon", 'deploy'],
  ['Please ship the Android app', 'deploy'],
  // Negated.
  ["Build the login screen, but don't deploy yet", 'build'],
  ["Don't deploy", 'build'],
  ['Do not publish anything', 'build'],
  ['Deploy nothing yet, just build', 'build'],
  ["Please don't ship it", 'build'],
  ['Ship it? Not yet', 'build'],
  ['Deploy it later, do not deploy it now', 'build'],
  ['Release it not yet', 'build'],
  ['Never release on Fridays: add a warning banner', 'build'],
  // The words as nouns or in other forms.
  ['Release notes: improve the settings screen', 'build'],
  ['Release: dark mode for the settings screen', 'build'],
  ['Add a shipping address form', 'build'],
  ['Fix the release build', 'build'],
  ['Release build for iOS crashes on start', 'build'],
  ['Publish button on the settings screen should be blue', 'build'],
  ['Ship date picker in the checkout', 'build'],
  ['Deployment status page with a progress bar', 'build'],
  ['Deploying takes too long: show a spinner', 'build'],
  ['Published articles list', 'build'],
  ['Build the app and then deploy it', 'build'],
  ['Now deploy it', 'build'],
  ['Make the publish flow faster', 'build'],
  ['Add a "Ship it" button', 'build'],
  ['Shipping costs screen', 'build'],
  ['Redeploy', 'build'],
];

describe('inferKind', () => {
  it('has at least 25 phrasings', () => expect(TABLE.length).toBeGreaterThanOrEqual(25));
  it.each(TABLE)('%j -> %s', (message, kind) => {
    expect(inferKind(message)).toBe(kind);
  });
});

describe('svc_send_message without kind, through a real SDK client', () => {
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startTestServer({ scriptedStepMs: 1 });
    client = await httpClient(server.mcpUrl, server.token('alice'));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('answers with the kind it chose; a passed kind always wins', async () => {
    const send = async (message: string, kind?: string) => {
      const project = (await client.callTool({ name: 'svc_create_project', arguments: { name: 'Kinds' } }))
        .structuredContent as { id: string };
      const sent = await client.callTool({
        name: 'svc_send_message',
        arguments: { projectId: project.id, message, ...(kind && { kind }) },
      });
      return (sent.structuredContent as { kind: string }).kind;
    };
    expect(await send("Build the login screen, but don't deploy yet")).toBe('build');
    expect(await send('Release notes: improve the settings screen')).toBe('build');
    expect(await send('Please publish to the stores')).toBe('deploy');
    expect(await send('Release notes: improve the settings screen', 'deploy')).toBe('deploy');
    expect(await send('Deploy it', 'build')).toBe('build');
  });
});
