/** The authenticated caller of a tool: the user behind the API token (docs/contract.md#tokens-and-security). */
export interface Caller {
  userId: string;
  userName: string;
  plan: string;
  tokenId: string;
}
