#!/usr/bin/env node
// Runs a script on another Node LTS line: `node scripts/on-node.mjs <line> <script> [args…]`, e.g. npm test's
// unit and contract projects on Node 24 when the machine has Node 20 or 22. That Node (pinned in
// cli/tools/provision.ts) comes from the npm registry into .tools/node-<line>/ on first use, through
// `callpipe tools --node <line>`. When the machine's Node is already of that line, the run is left out:
// the suite has just run on it.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [line, script, ...args] = process.argv.slice(2);
if (!line || !script) {
  console.error('usage: node scripts/on-node.mjs <line> <script> [args…]');
  process.exit(2);
}
if (process.versions.node.split('.')[0] === line) {
  console.error(`on-node: this machine's Node is ${process.version}, of line ${line}: nothing more to run`);
  process.exit(0);
}

const tools = spawnSync(process.execPath, [join(root, 'bin', 'callpipe.js'), 'tools', '--node', line], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
});
if (tools.status !== 0) process.exit(tools.status ?? 1);
const node = tools.stdout.trim();

console.error(`on-node: ${script} ${args.join(' ')} on Node ${line} (${node})`);
// Its directory first on the PATH, so whatever the script starts as `node` is that Node too.
const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}` };
const res = spawnSync(node, [script, ...args], { cwd: root, stdio: 'inherit', env });
process.exit(res.status ?? 1);
