/**
 * The bug that re-processed every call every night (issue 12): with an output prefix spelled without
 * its trailing slash, the second `callpipe process` of the same recording answered `done` again instead
 * of `skipped`. Every spelling, through the real CLI, the real stack and its real S3 server.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { makeCall } from '../helpers/pipeline.ts';
import { objectStore, stackConfig } from '../helpers/stack.ts';
import { callOutputKeys, outputLocationOf } from '../../schemas/call-keys.ts';

const CLI = fileURLToPath(new URL('../../bin/callpipe.js', import.meta.url));

interface Outcome {
  callId: string;
  status: string;
}

/** `callpipe process` twice; it waits by default, and the second run also says the deprecated `--wait`. */
async function processTwice(file: string, env: Record<string, string>, args: string[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let run = 0; run < 2; run++) {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [CLI, 'process', file, '--json', ...(run === 1 ? ['--wait'] : []), ...args],
      { env: { ...process.env, ...inject('stackEnv'), ...env } },
    );
    if (run === 1) expect(stderr).toMatch(/^callpipe process: --wait is deprecated/m);
    const parsed = JSON.parse(stdout.slice(stdout.indexOf('['))) as Outcome[];
    outcomes.push(parsed[0]!);
  }
  return outcomes;
}

describe('output prefix spellings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-prefix-'));
  const run = Date.now().toString(36);

  it.each([
    ['a configured prefix without its slash', { CALLPIPE_S3_OUTPUT_PREFIX: `res-${run}` }, []],
    ['a nested prefix with doubled slashes', { CALLPIPE_S3_OUTPUT_PREFIX: `nested-${run}//a/b` }, []],
    ['an --out URL without its slash', {}, ['--out', `s3://callpipe/out-${run}`]],
    ['an --out URL with its slash', {}, ['--out', `s3://callpipe/out2-${run}/`]],
  ] as const)(
    '%s: the second run is skipped, and the result is where the spelling says',
    async (_label, env, args) => {
      const call = await makeCall(dir, `prefix-${Object.keys(env).length}-${args.length}.wav`, {
        durationSeconds: 8,
        seed: 3,
      });
      const [first, second] = await processTwice(call.path, env, [...args]);
      expect(first!.status).toBe('done');
      expect(second).toEqual(expect.objectContaining({ callId: first!.callId, status: 'skipped' }));
      const spelling = args[1] ?? (env as Record<string, string>).CALLPIPE_S3_OUTPUT_PREFIX!;
      const location = outputLocationOf(spelling, stackConfig().s3.bucket);
      const key = callOutputKeys(location, first!.callId).result;
      expect(await objectStore().withBucket(location.bucket).exists(key), key).toBe(true);
    },
  );
});
