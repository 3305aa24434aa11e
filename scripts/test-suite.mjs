#!/usr/bin/env node
// `npm test` after the bootstrap, in two lanes that run at once: lint beside tsc, then the unit, contract and
// workflow projects, then the second Node line's `node-line` project; and, from the start, the integration
// projects (their stack mostly waits on pacing and servers, so the first lane fills the cores it leaves).
// The first part that fails stops the run: the others are killed and nothing more starts. Integration prints
// as it goes; every other part's output is held and printed whole when it ends. Prints how long each part took.
//
// Every temporary file of the run (the tests', the servers', the product's scratch) goes into one per-run
// folder: TMPDIR points there for every process the run starts, and the folder is removed at the end,
// whatever happened (a failure, Ctrl-C); the run fails if it could not be removed.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const VITEST = 'node_modules/vitest/vitest.mjs';
/** Each part: its command, the parts it waits for, and whether it prints as it goes. */
const PARTS = [
  { name: 'lint', cmd: ['npm', 'run', '--silent', 'lint'] },
  { name: 'typecheck', cmd: ['npm', 'run', '--silent', 'typecheck'] },
  {
    name: 'unit, contract, workflow',
    after: ['lint', 'typecheck'],
    cmd: [
      'node',
      'scripts/on-node.mjs',
      'ts',
      VITEST,
      'run',
      '--project',
      'unit',
      '--project',
      'contract',
      '--project',
      'workflow',
    ],
  },
  {
    // The second Node line: only what can differ between lines (vitest.config.ts, `node-line`).
    name: 'node-line (second Node line)',
    after: ['unit, contract, workflow'],
    cmd: ['node', 'scripts/on-node.mjs', 'other', VITEST, 'run', '--project', 'node-line'],
    env: { CALLPIPE_TEST_WORKERS: '1' },
  },
  {
    name: 'integration',
    live: true,
    cmd: ['node', 'scripts/on-node.mjs', 'ts', VITEST, 'run', '--project', 'integration*'],
    env: { CALLPIPE_TEST_STACK_FILES: '2' },
  },
];

const runDir = mkdtempSync(join(tmpdir(), 'callpipe-test-run-'));
// Node's compiled-code cache for every Node process of the run: the suite starts the command, workers and
// servers hundreds of times, and each start compiles the same modules (a `callpipe` start takes about half
// the CPU with the cache warm). It lives in the run's folder, so it goes with it.
const compileCache = join(runDir, 'node-compile-cache');
const children = new Set();

function removeRunDir() {
  rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    removeRunDir();
    process.exit(130);
  });
}

/** Runs one part; `held` collects its output instead of printing it. Resolves to its exit code. */
function runPart(part, held) {
  return new Promise((resolve) => {
    const [command, ...args] = part.cmd;
    const child = spawn(command, args, {
      stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...process.env, ...part.env, TMPDIR: runDir, NODE_COMPILE_CACHE: compileCache },
    });
    children.add(child);
    if (held) {
      child.stdout.on('data', (chunk) => held.push(chunk));
      child.stderr.on('data', (chunk) => held.push(chunk));
    }
    child.on('error', (err) => {
      held?.push(Buffer.from(`${err.message}\n`));
      resolve(1);
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const timings = [];
const suiteStarted = Date.now();
let failed;

/** Runs one part once the parts it waits for have passed; prints its held output when it ends. */
async function runWhenReady(part, waitFor) {
  for (const name of part.after ?? []) if ((await waitFor.get(name)) !== 0) return -1;
  if (failed) return -1;
  const held = part.live ? null : [];
  const started = Date.now();
  const code = await runPart(part, held);
  const seconds = (Date.now() - started) / 1000;
  timings.push({ name: part.name, seconds, code: failed && code !== 0 ? 'stopped' : code });
  if (held) {
    process.stdout.write(`\n── ${part.name} (${seconds.toFixed(0)} s) ──\n`);
    process.stdout.write(Buffer.concat(held));
  }
  if (code !== 0 && !failed) {
    failed = { part, code };
    for (const child of children) child.kill('SIGTERM');
  }
  return code;
}

const waitFor = new Map();
for (const part of PARTS) waitFor.set(part.name, runWhenReady(part, waitFor));
await Promise.all(waitFor.values());

removeRunDir();
const leftBehind = existsSync(runDir);
const total = (Date.now() - suiteStarted) / 1000;
console.log('\nnpm test, seconds per part:');
for (const t of timings)
  console.log(
    `  ${t.seconds.toFixed(0).padStart(5)}  ${t.name}${t.code === 0 ? '' : t.code === 'stopped' ? ' (stopped)' : ` (failed, exit ${t.code})`}`,
  );
console.log(`  ${total.toFixed(0).padStart(5)}  in all, wall clock`);
if (leftBehind) console.error(`npm test: the run's temporary folder ${runDir} could not be removed`);
else console.log(`  temporary files: the run's folder removed (${runDir})`);
if (failed) console.error(`npm test: ${failed.part.name} failed (exit ${failed.code})`);
process.exit(failed ? failed.code || 1 : leftBehind ? 1 : 0);
