/** `callpipe process` checks every input before it uploads or starts any: each bad one named with its cause. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkInputs } from '../../cli/submit.ts';
import { MemoryStore } from './nlp.helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'callpipe-check-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('checkInputs', () => {
  it('names every bad input with its cause, and passes the good ones', async () => {
    const good = join(dir, 'good.wav');
    const empty = join(dir, 'empty.wav');
    const locked = join(dir, 'locked.wav');
    writeFileSync(good, 'RIFF');
    writeFileSync(empty, '');
    writeFileSync(locked, 'RIFF');
    chmodSync(locked, 0o000);
    const store = new MemoryStore('calls');
    await store.put('in/a.wav', 'RIFF');
    const problems = await checkInputs(
      [
        good,
        join(dir, 'missing.wav'),
        empty,
        dir,
        's3://calls/in/a.wav',
        's3://calls/in/gone.wav',
        's3://calls',
        locked,
      ],
      store,
    );
    const expected = [
      { input: join(dir, 'missing.wav'), problem: 'no such file' },
      { input: empty, problem: 'the file is empty (0 bytes)' },
      { input: dir, problem: 'not a file' },
      { input: 's3://calls/in/gone.wav', problem: 'no such object' },
      { input: 's3://calls', problem: 'names a bucket, not an object' },
    ];
    // root reads any file: the permission check is only seen by others
    if (process.getuid?.() !== 0)
      expected.push({ input: locked, problem: 'not readable (permission denied)' });
    expect(problems).toEqual(expected);
  });
});
