/* global document, window */
// The host side of the MCP Apps card harness (tests/card/app-card.test.ts), bundled by the test:
// the extension's own AppBridge in a page, the card in a sandboxed iframe (srcdoc, no same origin,
// as hosts frame it), every tool call of the card passed to the test's MCP client
// (`window.hostCallTool`, exposed by Playwright).
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

/** Opens the card `html` as a host would, then gives it the tool call's input and result. */
window.openCard = async (html, input, result) => {
  const frame = document.createElement('iframe');
  frame.id = 'card';
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.style.cssText = 'width:420px;height:640px;border:1px solid #d1d9e0;border-radius:8px';
  document.body.append(frame);
  const bridge = new AppBridge(null, { name: 'card-harness', version: '1.0.0' }, { serverTools: {}, openLinks: {} });
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onopenlink = async () => ({});
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
};
