/**
 * The artifact handlers of a listener (docs/builders.md "Previews and deployments"): `/previews/*` and
 * `/deployments/*` on the shared host, and a project's own origin, each giving the builders'
 * landing pages (the expo builder's deployment page) the first word.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BuilderRoutes } from '../builders/builder-module.js';
import type { ArtifactReader } from '../services/artifact-reader.js';
import { artifactIdOf, serveArtifact } from './artifact-routes.js';
import { isArtifactPath, notFound } from './mcp-replies.js';

/** The artifact handlers of one listener. */
export interface ArtifactHandlers {
  /** On the shared host every artifact page runs in an opaque origin: tenants never share one. */
  shared(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
  /**
   * A project's own origin (`<project-id>.localhost:<port>` on the artifact listener): that
   * project's previews and deployments alone, keeping their origin (localStorage); 404 for
   * anything else.
   */
  ownOrigin(req: IncomingMessage, res: ServerResponse, path: string, projectId: string): Promise<void>;
}

/** The handlers over `artifacts` and the builders' `builderRoutes`. */
export function artifactHandlers(artifacts: ArtifactReader, builderRoutes: readonly BuilderRoutes[]): ArtifactHandlers {
  // A builder's page in place of an artifact's files (the expo builder's deployment landing page).
  const builderLanding = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    for (const mounted of builderRoutes) if (mounted.landing && (await mounted.landing(req, res, path))) return true;
    return false;
  };
  return {
    shared: async (req, res, path) => {
      if (await builderLanding(req, res, path)) return;
      await serveArtifact(artifacts, req, res, path, { ownOrigin: false });
    },
    ownOrigin: async (req, res, path, projectId) => {
      if (!isArtifactPath(path)) return notFound(res);
      const id = artifactIdOf(path);
      if (id && (await artifacts.find(id))?.projectId !== projectId) return notFound(res);
      if (await builderLanding(req, res, path)) return;
      await serveArtifact(artifacts, req, res, path, { ownOrigin: true, projectId });
    },
  };
}
