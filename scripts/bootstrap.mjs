#!/usr/bin/env node
// First step of `npm test` and `npm run demo` on a fresh clone: make sure a Node that runs TypeScript is
// at hand (this one from 22.18 on, else the pinned Node 24 from the npm registry, scripts/node-runtime.mjs),
// install node_modules from the lock file when they are missing or stale, then provision the external
// tools (ffmpeg, temporal, weed) into .tools/. Plain JavaScript with no dependencies, because it runs
// before node_modules exist and on any Node.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { typeScriptNodeOrExit } from './node-runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(root, 'package-lock.json');
const stamp = join(root, 'node_modules', '.callpipe-lock-hash');
const hash = createHash('sha256').update(readFileSync(lock)).digest('hex');

const node = typeScriptNodeOrExit();
// That Node first on the PATH: npm ci checks the project's engines against the Node it runs on.
const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}` };

if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash) {
  console.error('callpipe: installing node_modules from package-lock.json (npm ci)…');
  const res = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit', env });
  if (res.status !== 0) {
    console.error('callpipe: npm ci failed; the npm registry must be reachable for a first install.');
    process.exit(res.status ?? 1);
  }
  writeFileSync(stamp, hash);
}

// `--test` (npm test): also the test-only packages (pyarrow, which reads every Parquet file back, and
// moto's server, the SQS-compatible server `callpipe watch --sqs` is tested against; pinned in
// cli/tools/provision.ts).
const extra = process.argv.includes('--test') ? ['--test'] : [];
const res = spawnSync(node, [join(root, 'bin', 'callpipe.js'), 'tools', '--quiet', ...extra], {
  cwd: root,
  stdio: 'inherit',
  env,
});
process.exit(res.status ?? 1);
