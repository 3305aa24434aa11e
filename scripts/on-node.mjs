#!/usr/bin/env node
// Runs a script on a chosen Node: `node scripts/on-node.mjs <which> <script> [args…]`, where <which> is
// - `ts`: a Node that runs callpipe's TypeScript: this one from 22.18 on, else the pinned Node 24
//   (npm test's main run, so that the CLI and workers the tests start run on it too);
// - `other`: the other pinned LTS line than `ts` picks (npm test's second leg of unit and contract tests);
// - a line (`22`, `24`): that line's pinned Node; when this machine's Node is of that line, the run is
//   left out, the suite has just run on it.
// Pinned Nodes come from the npm registry into .tools/node-<line>/ on first use (scripts/node-runtime.mjs).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_LINE, ensureNode, PINNED_NODE, stripsTypes, typeScriptNode } from './node-runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [which, script, ...args] = process.argv.slice(2);
if (!which || !script || !(which === 'ts' || which === 'other' || Object.hasOwn(PINNED_NODE, which))) {
  console.error(
    `usage: node scripts/on-node.mjs <ts | other | ${Object.keys(PINNED_NODE).join(' | ')}> <script> [args…]`,
  );
  process.exit(2);
}
const thisLine = process.versions.node.split('.')[0];
const log = (line) => console.error(`on-node: ${line}`);

let node;
try {
  if (which === 'ts') node = typeScriptNode(log);
  else {
    const tsLine = stripsTypes() ? thisLine : DEFAULT_LINE;
    const line = which === 'other' ? Object.keys(PINNED_NODE).find((l) => l !== tsLine) : which;
    if (line === thisLine) {
      log(`this machine's Node is ${process.version}, of line ${line}: nothing more to run`);
      process.exit(0);
    }
    node = ensureNode(line, log);
  }
} catch (err) {
  log(err.message);
  process.exit(1);
}

if (node !== process.execPath) log(`${script} ${args.join(' ')} on Node ${node}`);
// Its directory first on the PATH, so whatever the script starts as `node` is that Node too.
const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}` };
const res = spawnSync(node, [script, ...args], { cwd: root, stdio: 'inherit', env });
process.exit(res.status ?? 1);
