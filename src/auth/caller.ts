/** The authenticated caller of a tool: the user behind the API token (docs/contract.md#tokens-and-security). */
export interface Caller {
  userId: string;
  userName: string;
  plan: string;
  /** The API token's id, or for an OAuth access token the id of its grant. */
  tokenId: string;
  /**
   * What the request rate limits count this caller under: the API token's id when absent; for
   * OAuth callers `user:<userId>`, so that many grants never multiply a user's limit.
   */
  rateKey?: string;
  /**
   * Set for a read-only API token (`token create --read-only`): it lists and calls only the tools
   * annotated `readOnlyHint`; another tool answers -32003 (`data.reason = "read_only_token"`).
   */
  readOnly?: true;
}
