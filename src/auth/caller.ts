/** The authenticated caller of a tool: the user behind the API token (spec section 5). */
export interface Caller {
  userId: string;
  userName: string;
  plan: string;
  tokenId: string;
}
