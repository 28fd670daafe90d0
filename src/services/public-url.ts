/**
 * The public base URL of preview and deployment links (design section 5: URLs are built at read
 * time, never stored absolute). Set from `--public-url`, else from the address the HTTP listener
 * actually bound (known only after `listen`, e.g. with port 0).
 */
export class PublicUrl {
  private value: string;

  constructor(configured?: string) {
    this.value = configured ? configured.replace(/\/+$/, '') : 'http://127.0.0.1:3333';
    this.fixed = Boolean(configured);
  }

  private readonly fixed: boolean;

  /** `http://127.0.0.1:3333` (no trailing slash). */
  get(): string {
    return this.value;
  }

  /** Records the bound address, unless the operator configured a public URL. */
  bound(host: string, port: number): void {
    if (this.fixed) return;
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.value = `http://${shown}:${port}`;
  }
}
