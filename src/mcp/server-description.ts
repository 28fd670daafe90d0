/** What the server says about itself in both protocol eras: `serverInfo`, capabilities, instructions. */
export interface ServerDescription {
  info: { name: string; title: string; version: string };
  capabilities: { tools: { listChanged: false } };
  instructions: string;
}
