// `npm run pack:mcpb [-- --out DIR]`: builds the MCP Bundle (`.mcpb`, README "Connect an MCP host")
// with the `mcpb` CLI (@anthropic-ai/mcpb), offline, from the built `dist/` and `node_modules`.
//
// The bundle holds what the bin runs: bin/, dist/ (the start-up bundles need no other package),
// drizzle/ (migrations), assets/, toolchains/, and of node_modules only better-sqlite3 (a native
// addon, built for this machine's platform and Node ABI) and what it loads at run time. Its
// manifest runs `serve` over stdio with the API token from a sensitive `user_config` field in
// SVC_API_TOKEN; `name`, `version` and the tool list come from package.json and the built tools.
// The manifest is validated (`mcpb validate`) before packing. Prints the bundle's path.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** The manifest (MCPB manifest 0.3, the `mcpb` CLI's schema). */
const manifest = {
  manifest_version: '0.3',
  name: pkg.name,
  display_name: 'Mobile app builder',
  version: pkg.version,
  description: pkg.description,
  author: { name: 'mobile-builder-mcp contributors' },
  license: pkg.license,
  keywords: pkg.keywords,
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

const stage = mkdtempSync(join(tmpdir(), 'mbm-mcpb-'));
try {
  for (const entry of ['bin', 'dist', 'drizzle', 'assets', 'toolchains', 'LICENSE', 'README.md', 'package.json']) {
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  for (const dir of runtimePackages()) {
    const name = dir.split('node_modules/').at(-1);
    const target = join(stage, 'node_modules', name);
    // The addon's sources (deps/, src/) are not needed to load it.
    cpSync(dir, target, { recursive: true, filter: (path) => !/^[\\/](deps|src)([\\/]|$)/.test(path.slice(dir.length)) });
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
  const file = join(outDir, `${pkg.name}-${pkg.version}.mcpb`);
  rmSync(file, { force: true });
  mcpb('pack', stage, file);
  console.log(file);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
