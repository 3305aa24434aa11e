#!/usr/bin/env node
// First step of `npm test` and `npm run demo` on a fresh clone: install node_modules from the lock file
// when they are missing or stale, then provision the external tools (ffmpeg, temporal, weed) into
// .tools/. Plain JavaScript with no dependencies, because it runs before node_modules exist.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(root, 'package-lock.json');
const stamp = join(root, 'node_modules', '.callpipe-lock-hash');
const hash = createHash('sha256').update(readFileSync(lock)).digest('hex');

if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash) {
  console.error('callpipe: installing node_modules from package-lock.json (npm ci)…');
  const res = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) {
    console.error('callpipe: npm ci failed; the npm registry must be reachable for a first install.');
    process.exit(res.status ?? 1);
  }
  writeFileSync(stamp, hash);
}

// `--test` (npm test): also the test-only packages (pyarrow, which reads every Parquet file back).
const extra = process.argv.includes('--test') ? ['--test'] : [];
const res = spawnSync(process.execPath, [join(root, 'bin', 'callpipe.js'), 'tools', '--quiet', ...extra], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(res.status ?? 1);
