/**
 * The public base URLs of links (README.md#builders: URLs are built at read time, never stored
 * absolute). `get()` is the service's own base (`--public-url`, else from the address the HTTP
 * listener bound). `artifacts()` is the base of previews, deployments and Expo updates: their own
 * origin when one is configured (`--artifact-url`) or listening, so a preview may use
 * `localStorage` without ever sharing an origin with `/mcp`; else the service's base.
 */
export class PublicUrl {
  private value: string;
  private readonly fixed: boolean;
  private artifactValue: string | null;
  private readonly artifactFixed: boolean;

  constructor(configured?: string, artifactConfigured?: string) {
    this.value = configured ? configured.replace(/\/+$/, '') : 'http://127.0.0.1:3333';
    this.fixed = Boolean(configured);
    this.artifactValue = artifactConfigured ? artifactConfigured.replace(/\/+$/, '') : null;
    this.artifactFixed = Boolean(artifactConfigured);
  }

  /** `http://127.0.0.1:3333` (no trailing slash). */
  get(): string {
    return this.value;
  }

  /** Base of artifact links (no trailing slash): the artifact origin, else `get()`. */
  artifacts(): string {
    return this.artifactValue ?? this.value;
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

function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}
