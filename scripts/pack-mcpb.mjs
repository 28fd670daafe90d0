// `npm run pack:mcpb [-- --out DIR]`: builds the MCP Bundle (`.mcpb`, docs/hosts.md "More ways to connect")
// with the `mcpb` CLI (@anthropic-ai/mcpb), offline, from the built `dist/` and `node_modules`.
//
// The bundle holds what the bin runs: bin/, the start-up bundles of dist/ (`*.cjs`: they need no
// other package and none of tsc's per-module output, declarations or source maps) and the MCP
// Apps card (`session-card.html`), drizzle/
// (migrations), assets/, toolchains/, and of node_modules only better-sqlite3 (a native addon,
// built for this machine's platform and Node ABI) and what it loads at run time. Its manifest
// (MCPB manifest 0.4) runs `serve` over stdio with the API token from a sensitive `user_config`
// field in SVC_API_TOKEN; `name`, `version`, the tool list and the icon (assets/icon-128.png, see
// scripts/render-icon.mjs) come from package.json, the built tools and assets/. The manifest is
// validated (`mcpb validate`) before packing. The file is named for its platform
// (`mobile-builder-mcp-0.1.0-linux-x64.mcpb`): the addon runs only there. Prints the bundle's path.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outIndex = process.argv.indexOf('--out');
const outDir = resolve(outIndex > 0 ? process.argv[outIndex + 1] : join(root, 'mcpb'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const mcpbCli = join(root, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');

if (!existsSync(join(root, 'dist', 'mobile-builder-mcp.cjs'))) {
  console.error('pack:mcpb: dist/ is not built; run `npm run build` first');
  process.exit(1);
}

const { ALL_TOOLS } = await import(join(root, 'dist', 'mcp', 'tools', 'index.js'));

/** The manifest (MCPB manifest 0.4, the `mcpb` CLI's schema). */
const manifest = {
  manifest_version: '0.4',
  name: pkg.name,
  display_name: 'Mobile app builder',
  version: pkg.version,
  description: pkg.description,
  author: { name: 'mobile-builder-mcp contributors' },
  license: pkg.license,
  keywords: pkg.keywords,
  icon: 'icon.png',
  icons: [{ src: 'icon.png', size: '128x128' }],
  server: {
    type: 'node',
    entry_point: 'bin/mobile-builder-mcp.js',
    mcp_config: {
      command: 'node',
      args: ['${__dirname}/bin/mobile-builder-mcp.js', 'serve'],
      env: { SVC_API_TOKEN: '${user_config.api_token}' },
    },
  },
  user_config: {
    api_token: {
      type: 'string',
      title: 'API token',
      description: 'Your mobile-builder-mcp API token (svc_...), from `mobile-builder-mcp token create --user <you>`.',
      sensitive: true,
      required: true,
    },
  },
  tools: ALL_TOOLS.map((tool) => ({ name: tool.name, description: tool.descriptor.title ?? tool.name })),
  compatibility: { platforms: [process.platform], runtimes: { node: pkg.engines.node } },
};

/** better-sqlite3 and the packages it requires at run time (not its install-time helpers). */
function runtimePackages() {
  const require = createRequire(join(root, 'package.json'));
  const wanted = ['better-sqlite3', 'bindings', 'file-uri-to-path'];
  return wanted.map((name) => dirname(require.resolve(`${name}/package.json`)));
}

/**
 * Whether a package's file (its path inside the package, `/`-separated, starting with `/`) is one
 * the bundle needs at run time: not the addon's sources (deps/, src/), not the compiler's
 * intermediates under build/ (objects, the static library, makefiles, the test extension: only
 * build/Release/better_sqlite3.node is loaded), not a package's tests.
 */
function runtimeFile(path) {
  if (/^\/(deps|src|test)(\/|$)/.test(path)) return false;
  if (!path.startsWith('/build')) return true;
  return ['/build', '/build/Release', '/build/Release/better_sqlite3.node'].includes(path);
}

const stage = mkdtempSync(join(tmpdir(), 'mbm-mcpb-'));
try {
  for (const entry of ['bin', 'drizzle', 'assets', 'toolchains', 'LICENSE', 'README.md', 'package.json']) {
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  // Only the start-up bundles: what bin/ loads (bin/mobile-builder-mcp.js).
  mkdirSync(join(stage, 'dist'));
  // And the MCP Apps card (dist/session-card.html), which a host with the extension reads over stdio.
  for (const name of readdirSync(join(root, 'dist')).filter((f) => f.endsWith('.cjs') || f === 'session-card.html'))
    cpSync(join(root, 'dist', name), join(stage, 'dist', name));
  cpSync(join(root, 'assets', 'icon-128.png'), join(stage, 'icon.png'));
  for (const dir of runtimePackages()) {
    const name = dir.split('node_modules/').at(-1);
    const target = join(stage, 'node_modules', name);
    cpSync(dir, target, {
      recursive: true,
      filter: (path) => runtimeFile(path.slice(dir.length).split('\\').join('/')),
    });
  }
  // mcpb leaves out every package-lock.json; the Expo toolchain's lockfile is what it installs from.
  writeFileSync(join(stage, '.mcpbignore'), '!toolchains/*/package-lock.json\n');
  writeFileSync(join(stage, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const mcpb = (...args) => {
    const run = spawnSync(process.execPath, [mcpbCli, ...args], { encoding: 'utf8' });
    if (run.status !== 0) {
      console.error(run.stdout, run.stderr);
      process.exit(run.status ?? 1);
    }
    return run.stdout;
  };
  mcpb('validate', join(stage, 'manifest.json'));
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${pkg.name}-${pkg.version}-${process.platform}-${process.arch}.mcpb`);
  rmSync(file, { force: true });
  mcpb('pack', stage, file);
  console.log(file);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
