// Which Node runs callpipe's TypeScript: Node's own type stripping (on by default from 22.18 and in 24),
// no tsx and no build step. On an older Node (this machine's and CI's 20), the pinned Node of an LTS line
// comes from the npm registry (npm's `node` package) into .tools/node-<line>/, once, and runs it instead.
// Plain JavaScript with no dependencies: it runs before node_modules exist and on any Node.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TOOLS_DIR = join(ROOT, '.tools');

/** Node LTS lines callpipe runs and is tested on (package.json `engines`), pinned to a release of each. */
export const PINNED_NODE = { 22: '22.23.3', 24: '24.21.0' };

/** The line a Node too old to strip types hands over to. */
export const DEFAULT_LINE = '24';

/** Whether this Node runs `.ts` files as they are (`process.features.typescript`: 'strip' or 'transform'). */
export function stripsTypes() {
  return Boolean(process.features.typescript);
}

/** Where `ensureNode` puts a Node line's binary. */
export function nodePath(line) {
  return join(TOOLS_DIR, `node-${line}`, 'node_modules', 'node', 'bin', 'node');
}

/**
 * The pinned Node of `line` under `.tools/node-<line>/`, installed from the npm registry when missing or
 * of another version (about 130 MB, once). Returns the path of its `node` binary; throws with a reason.
 */
export function ensureNode(line, log = () => {}) {
  const version = PINNED_NODE[line];
  if (!version)
    throw new Error(`no pinned Node for line ${line} (pinned: ${Object.keys(PINNED_NODE).join(', ')})`);
  const dir = join(TOOLS_DIR, `node-${line}`);
  const stamp = join(dir, 'version');
  const path = nodePath(line);
  if (existsSync(path) && existsSync(stamp) && readFileSync(stamp, 'utf8') === version) return path;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`installing Node ${version} from the npm registry (package node) into .tools/node-${line}…`);
  // Its own prefix and no lock file: the project's package.json and package-lock.json stay untouched.
  const args = ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund'];
  const res = spawnSync('npm', [...args, `node@${version}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (res.error || res.status !== 0) {
    const tail = `${res.stderr ?? ''}${res.stdout ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new Error(
      `could not install Node ${version} from the npm registry (is it reachable?)${res.error ? `: ${res.error.message}` : ''}\n${tail}`,
    );
  }
  const check = spawnSync(path, ['--version'], { encoding: 'utf8' });
  if (check.stdout?.trim() !== `v${version}`)
    throw new Error(`Node ${version} is not runnable at ${path} after installation: ${check.stderr ?? ''}`);
  writeFileSync(stamp, version);
  return path;
}

/**
 * A Node that runs callpipe's TypeScript: this one when it strips types, else the pinned `DEFAULT_LINE`
 * (installed on first use).
 */
export function typeScriptNode(log) {
  return stripsTypes() ? process.execPath : ensureNode(DEFAULT_LINE, log);
}

/**
 * {@link typeScriptNode} for the command-line entry points (bin/callpipe.js, the bootstrap): what it
 * installs is said on stderr, and a Node that cannot be had ends the process with the reason.
 */
export function typeScriptNodeOrExit() {
  try {
    return typeScriptNode((line) => console.error(`callpipe: ${line}`));
  } catch (err) {
    console.error(`callpipe: Node ${process.versions.node} cannot run TypeScript, and ${err.message}`);
    process.exit(1);
  }
}
