/**
 * What one process of the service does (docs/operators.md "Roles"). A root module, so that the settings
 * table, the composition root and the transports name the roles from one list.
 *
 * - `all`: MCP (stdio or HTTP), console, OAuth, artifacts and the builds, in one process: one
 *   machine, as the service always ran (also N identical nodes on one PostgreSQL database);
 * - `api`: MCP, console, OAuth and artifacts; claims no workflow (workers build), but reaps
 *   expired leases like every node;
 * - `worker`: claims and builds workflows (the `worker` command); no MCP listener.
 */
export const ROLES = ['all', 'api', 'worker'] as const;

/** One of `ROLES`. */
export type Role = (typeof ROLES)[number];
