/**
 * What the server says about itself in both protocol eras: `serverInfo`, capabilities,
 * instructions. A leaf: the early answer to a stdio start's `initialize` (`early-initialize.ts`)
 * reads it without loading the SDK.
 */

import { SERVER_ICONS, type Icon } from './icons.js';

/** What `describeServer` returns. */
export interface ServerDescription {
  info: { name: string; title: string; version: string; icons: Icon[] };
  capabilities: { tools: { listChanged: false } };
  instructions: string;
}

/** `serverInfo.name` at `initialize`. */
const SERVER_NAME = 'mobile-builder-mcp';

/** Guidance the server gives a model at `initialize`. */
const SERVER_INSTRUCTIONS = [
  'This server manages native mobile app projects and runs build and deploy workflows on them through a building agent.',
  'Typical use: svc_create_project, then svc_send_message with kind "build" and an instruction, then svc_send_message with kind "deploy". Always pass kind.',
  'Workflows run one at a time per project; later ones queue (a send with kind and no questionId is a new instruction, even while a question waits). Follow a workflow with svc_get_session and waitSeconds 30 to 45 (a wait never runs past 45 s): it returns when the workflow changes step, asks a question or ends, so do not poll; an error -32001 "Request timed out" is your client\'s timeout, not a token problem: call again. Read the conversation with svc_get_messages (pass nextAfter as after).',
  'When svc_get_session shows a pendingQuestion, answer it with svc_send_message (questionId = pendingQuestion.questionId). After a build, call svc_get_session with screenshot: true to see the app on a phone-sized screen before you describe it. svc_cancel_workflow stops work.',
  'A pendingQuestion of kind "code" is addressed to YOU, not to the user: the building agent asks you to write the app\'s code. Its prompt holds the task (the user\'s instruction, the app\'s files, the packages and rules); answer yourself, without asking the user, with svc_send_message whose message is JSON {"summary": "...", "files": [{"path": "App.tsx", "content": "<whole file>"}], "delete": []} matching pendingQuestion.format, at most pendingQuestion.maxLength characters. The server checks it (-32602 lists each problem in error.data.issues: fix and resend), type-checks it, and may ask again with the compiler\'s errors.',
  'Errors are JSON-RPC errors; each tool description says what its codes mean and what to do. -32005 means wait (error.data.retryAfterSeconds) and repeat; -32003 and -32004 will not change by retrying.',
].join('\n');

/** The description of this server at package version `version`. */
export function describeServer(version: string): ServerDescription {
  return {
    info: { name: SERVER_NAME, title: 'Mobile app builder', version, icons: SERVER_ICONS },
    capabilities: { tools: { listChanged: false } },
    instructions: SERVER_INSTRUCTIONS,
  };
}
