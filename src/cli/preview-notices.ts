/**
 * What `serve --http` tells the operator at start about where web previews are served (README
 * "Previews and deployments").
 */
import { isIP } from 'node:net';
import type { App } from '../app.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';

/** Where web previews are served, for the start-up line: `http://<project-id>.localhost:3334/` or the path form. */
export function previewsShown(app: App): string {
  return app.publicUrl.origins === 'shared'
    ? `${app.publicUrl.artifacts()}/previews/<id>/ (shared, opaque origins)`
    : `${app.publicUrl.projectOrigin('<project-id>')}/`;
}

/**
 * Per-project origins under an address that is not loopback (a LAN IP) fall back to
 * `<project-id>.localhost`, which only a browser on this machine reaches: the operator is told how
 * to serve them to other machines (a warning in the log). Phones are unaffected (Expo updates stay
 * on the shared host).
 */
export function warnAboutPreviewHosts(app: App): void {
  if (app.publicUrl.origins === 'shared') return;
  const host = new URL(app.publicUrl.artifacts()).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 0 || isLoopbackHostname(host)) return;
  app.logger.warn(
    { artifacts: app.publicUrl.artifacts() },
    'web previews are served at http://<project-id>.localhost, which only a browser on this machine opens: for other machines pass --artifact-url with a wildcard DNS name (docs/builders.md "Previews and deployments"), or --artifact-origins shared',
  );
}
