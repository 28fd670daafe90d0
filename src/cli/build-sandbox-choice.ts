/**
 * Which sandbox a process's builds run in (docs/security.md "The build sandbox"), and how its start-up line
 * says so.
 */
import { builderRunsProcesses } from '../builders/builder-registry.js';
import { detectBuildSandbox, SANDBOX_TURNED_OFF, type BuildSandbox } from '../builders/process-sandbox.js';

/**
 * The sandbox of this process's builds. A process that builds for every user who holds a token
 * or signs in (`serve --http`, a worker) refuses to start when its builds would run unconfined,
 * unless the operator says so with `--no-build-sandbox`; a builder that starts no process
 * (scripted) needs none, and neither does an API node (it builds nothing).
 * @param options `buildSandbox` false for `--no-build-sandbox`; `multiUser` for serve --http and workers.
 * @throws Error naming the reason and both ways out.
 */
export function buildSandboxFor(options: {
  buildSandbox: boolean;
  builder: string;
  multiUser: boolean;
  command: string;
}): BuildSandbox {
  if (!options.buildSandbox) return SANDBOX_TURNED_OFF;
  const sandbox = detectBuildSandbox();
  if (sandbox.kind === 'none' && options.multiUser && builderRunsProcesses(options.builder)) {
    throw new Error(
      `${options.command} runs builds for every user who signs in, and no build sandbox can be made here: ${sandbox.reason}. ` +
        'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, ' +
        "or pass --no-build-sandbox (SVC_NO_BUILD_SANDBOX=1) to run every build with this server's rights.",
    );
  }
  return sandbox;
}

/** The start-up line's words about the sandbox: `builds sandboxed (bubblewrap)` or `builds NOT sandboxed (why)`. */
export function sandboxLine(sandbox: BuildSandbox): string {
  return sandbox.kind === 'bubblewrap'
    ? 'builds sandboxed (bubblewrap)'
    : `builds NOT sandboxed (${sandbox.reason ?? 'no sandbox'})`;
}
