#!/usr/bin/env node
// Runs two npm scripts at once: `node scripts/alongside.mjs <main> <beside>`. The main one prints as it
// goes; the one beside it is held and printed whole once both have ended, so the two never interleave.
// Exits non-zero when either failed. `npm test` runs the second Node line's unit and contract tests beside
// the integration project, whose tests spend much of their time waiting on the stack, so that wait is not
// added to the suite's length.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';

const [main, beside] = process.argv.slice(2);
if (!main || !beside) {
  console.error('usage: node scripts/alongside.mjs <npm script> <npm script run beside it>');
  process.exit(2);
}

/** Runs `npm run <script>`; `held` collects its output instead of printing it. */
function run(script, held) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: held ? 'pipe' : 'inherit' });
    if (held) {
      child.stdout.on('data', (chunk) => held.push(chunk));
      child.stderr.on('data', (chunk) => held.push(chunk));
    }
    child.on('error', (err) => {
      held?.push(Buffer.from(`${err.message}\n`));
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const held = [];
const started = Date.now();
const [mainCode, besideCode] = await Promise.all([run(main, null), run(beside, held)]);
const seconds = ((Date.now() - started) / 1000).toFixed(0);
process.stdout.write(`\n── npm run ${beside} (run beside ${main}; ${seconds} s for both) ──\n`);
process.stdout.write(Buffer.concat(held));
for (const [script, code] of [
  [main, mainCode],
  [beside, besideCode],
]) {
  if (code !== 0) console.error(`alongside: npm run ${script} failed (exit ${code})`);
}
process.exit(mainCode !== 0 ? mainCode : besideCode);
