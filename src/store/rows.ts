/**
 * The row types every store adapter reads and writes (docs/architecture.md "The store port"):
 * plain objects with the columns in camelCase, timestamps as ISO 8601 text, lease ends as Unix ms.
 * They are inferred from the SQLite schema today; a second adapter's schema must produce the same
 * types (its parity test compares them).
 */
export type {
  AnswerCheckRow,
  ApiTokenRow,
  ArtifactRow,
  LoginCodeRow,
  NodeRow,
  MessageRow,
  OAuthAuthorizationRequestRow,
  OAuthClientRow,
  OAuthCodeRow,
  OAuthGrantRow,
  OAuthTokenRow,
  ProcessGroupRow,
  ProjectRow,
  QuestionRow,
  SendReceiptRow,
  UserRow,
  WebSessionRow,
  WorkflowRow,
  WorkflowStatus,
} from './sqlite/schema.js';
