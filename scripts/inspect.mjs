// `npm run inspect -- <inspector-cli arguments>`: the MCP Inspector's CLI with the API token taken
// from the environment (SVC_API_TOKEN), so that the token never appears on the command line npm
// echoes ("> node scripts/inspect.mjs ..."). Over HTTP (the first argument is a URL) it adds
// `--header "Authorization: Bearer <token>"`; over stdio it passes `-e SVC_API_TOKEN=<token>` to
// the server it launches. It runs inspector-cli from this folder: inspector-cli 1.0.3 resolves its
// own package.json against the working directory (see README.md here).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'cli.js');
const args = process.argv.slice(2);
const token = process.env.SVC_API_TOKEN;
if (token) {
  if (/^https?:\/\//.test(args[0] ?? '')) args.push('--header', `Authorization: Bearer ${token}`);
  else args.unshift('-e', `SVC_API_TOKEN=${token}`);
}
const child = spawn(process.execPath, [cli, '--cli', ...args], { cwd: here, stdio: 'inherit' });
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
