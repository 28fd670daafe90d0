/**
 * The public base URLs of links (docs/builders.md#builders: URLs are built at read time, never stored
 * absolute). `get()` is the service's own base (`--public-url`, else from the address the HTTP
 * listener bound). `artifacts()` is the shared base of artifacts (Expo updates, native landing
 * pages, the path form of previews): their own listener when one is configured (`--artifact-url`)
 * or listening; else the service's base. `artifactBaseOf()` is where a project's web previews and
 * web deployments live: one origin per project (docs/builders.md "Previews and deployments"), so no
 * project's page shares an origin with another project's, with `/mcp` or with the web console.
 */
import { DEFAULTS } from '../core/defaults.js';
import { isIP } from 'node:net';
import { LOCALHOST } from '../io/loopback-hosts.js';

/** How previews and web deployments get their origins (`--artifact-origins`). */
export const ARTIFACT_ORIGIN_MODES = ['per-project', 'shared'] as const;
/**
 * `per-project` (default): `http://<project-id>.localhost:<port>/` on loopback, or
 * `<scheme>://<project-id>.<artifact host>/` behind `--artifact-url`. `shared`: every artifact
 * under the one artifact base (the path form), each page in an opaque origin (CSP `sandbox`
 * without `allow-same-origin`).
 */
export type ArtifactOrigins = (typeof ARTIFACT_ORIGIN_MODES)[number];

/** The shape of a project id in a host name (a UUID, lower case). */
const PROJECT_LABEL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class PublicUrl {
  private value: string;
  private readonly fixed: boolean;
  private artifactValue: string | null;
  private readonly artifactFixed: boolean;

  /**
   * @param configured `--public-url`; `artifactConfigured` `--artifact-url`; `origins` `--artifact-origins`.
   */
  constructor(
    configured?: string,
    artifactConfigured?: string,
    readonly origins: ArtifactOrigins = DEFAULTS.artifactOrigins,
  ) {
    this.value = configured ? configured.replace(/\/+$/, '') : `http://${DEFAULTS.host}:${DEFAULTS.port}`;
    this.fixed = Boolean(configured);
    this.artifactValue = artifactConfigured ? artifactConfigured.replace(/\/+$/, '') : null;
    this.artifactFixed = Boolean(artifactConfigured);
  }

  /** `http://127.0.0.1:3333` (no trailing slash; until a listener is bound, the default host and port). */
  get(): string {
    return this.value;
  }

  /** Shared base of artifact links (no trailing slash): the artifact origin, else `get()`. */
  artifacts(): string {
    return this.artifactValue ?? this.value;
  }

  /**
   * Base (no trailing slash) of one artifact's link: a web artifact gets its project's own origin
   * in `per-project` mode; native ones (phones fetch them over the shared host) and every artifact
   * in `shared` mode get `artifacts()`.
   */
  artifactBaseOf(artifact: { projectId: string; platform: string }): string {
    if (this.origins === 'shared' || artifact.platform !== 'web') return this.artifacts();
    return this.projectOrigin(artifact.projectId);
  }

  /**
   * `<scheme>://<project-id>.<parent>[:port][/path]` where the parent is `localhost` for a loopback
   * or IP-literal artifact base (browsers resolve `*.localhost` to loopback themselves) and the
   * artifact host name otherwise (a wildcard DNS name, docs/builders.md "Previews and deployments").
   */
  projectOrigin(projectId: string): string {
    const base = new URL(this.artifacts());
    const path = base.pathname.replace(/\/+$/, '');
    return `${base.protocol}//${projectId.toLowerCase()}.${projectParent(base.hostname)}${base.port ? `:${base.port}` : ''}${path}`;
  }

  /**
   * The project whose origin a `Host` header names (`<uuid>.localhost[:port]` or
   * `<uuid>.<artifact host>[:port]`), or null (another host, or `shared` mode).
   */
  projectOfHost(hostHeader: string | undefined): string | null {
    // A project's host starts with a 36-character UUID label and a dot: shorter ones (every
    // request to the service's own host, on the hot path) are not one.
    if (this.origins === 'shared' || !hostHeader || hostHeader.length < 38) return null;
    const host = hostHeader.trim().toLowerCase().replace(/:\d+$/, '');
    const dot = host.indexOf('.');
    if (dot === -1) return null;
    const label = host.slice(0, dot);
    const parent = host.slice(dot + 1);
    if (!PROJECT_LABEL.test(label)) return null;
    return parent === LOCALHOST || parent === projectParent(new URL(this.artifacts()).hostname) ? label : null;
  }

  /**
   * The console's `frame-src` for the web preview: every project origin (`http://*.localhost:3334`)
   * in `per-project` mode, else the artifact origin.
   */
  previewFrameSource(): string {
    const base = new URL(this.artifacts());
    if (this.origins === 'shared') return base.origin;
    return `${base.protocol}//*.${projectParent(base.hostname)}${base.port ? `:${base.port}` : ''}`;
  }

  /** Records the bound address, unless the operator configured a public URL. */
  bound(host: string, port: number): void {
    if (this.fixed) return;
    this.value = urlOf(host, port);
  }

  /**
   * Records the artifact listener's bound address, unless the operator configured `--artifact-url`.
   * With a configured `--public-url` that names a port (a direct address such as a LAN IP), the
   * artifact base is that host with the artifact listener's port, so links stay reachable from a
   * phone; a public URL without a port (a proxy) keeps artifacts under the public URL until
   * `--artifact-url` says where the proxy serves them.
   */
  artifactsBound(host: string, port: number): void {
    if (this.artifactFixed) return;
    if (!this.fixed) {
      this.artifactValue = urlOf(host, port);
      return;
    }
    const publicBase = new URL(this.value);
    if (!publicBase.port) return;
    publicBase.port = String(port);
    this.artifactValue = publicBase.toString().replace(/\/+$/, '');
  }
}

/** The parent name of project origins for an artifact host name: `localhost` for an address, else the name. */
function projectParent(hostname: string): string {
  const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return isIP(bare) !== 0 || bare === LOCALHOST ? LOCALHOST : bare;
}

function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}
