/**
 * A worker's per-process resources are sized from its limits and checked at start (issue 18): the S3
 * pool grows with the sessions, and a `ulimit -n` below what the limits need stops the start with the
 * numbers, the variables and the fix.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkProcessResources,
  openFileLimit,
  ProcessResourceError,
} from '../../workers/process-resources.ts';
import { fileDescriptorsFor, S3_DEFAULT_MAX_SOCKETS, s3SocketsFor } from '../../schemas/limits.ts';

const limits = { asrConcurrentSessions: 512, nlpConcurrency: 8, mediaConcurrency: 2, probeConcurrency: 1 };

describe('process resources', () => {
  it('sizes the S3 pool from the sessions, never below the SDK default', () => {
    expect(s3SocketsFor({ ...limits, asrConcurrentSessions: 1 })).toBe(S3_DEFAULT_MAX_SOCKETS);
    expect(s3SocketsFor(limits)).toBeGreaterThanOrEqual(2 * 512);
  });

  it('refuses a ulimit -n below the need, naming the numbers and the fix', () => {
    const needed = fileDescriptorsFor(limits);
    expect(() => checkProcessResources(limits, ['asr'], 1024)).toThrow(ProcessResourceError);
    expect(() => checkProcessResources(limits, ['asr', 'nlp', 'media', 'probe'], 1024)).toThrow(
      `this worker may open 1024 files (ulimit -n) but its limits need about ${needed} (CALLPIPE_ASR_CONCURRENT_SESSIONS=512`,
    );
    expect(() => checkProcessResources(limits, ['asr'], 1024)).toThrow(/ulimit -n \d+; LimitNOFILE=/);
    expect(checkProcessResources(limits, ['asr', 'nlp', 'media', 'probe'], needed)).toEqual({
      fileDescriptors: needed,
      available: needed,
    });
  });

  it('counts only the queues the process serves', () => {
    // 512 sessions need more than 1,024 files, but a media worker holds none of them.
    expect(() => checkProcessResources(limits, ['media', 'probe'], 1024)).not.toThrow();
    expect(() => checkProcessResources(limits, ['asr'], 1024)).toThrow(ProcessResourceError);
  });

  it('reads the soft limit of open files from /proc', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-limits-'));
    try {
      const file = join(dir, 'limits');
      writeFileSync(
        file,
        [
          'Limit                     Soft Limit           Hard Limit           Units',
          'Max processes             63476                63476                processes',
          'Max open files            4096                 524288               files',
        ].join('\n'),
      );
      expect(openFileLimit(file)).toBe(4096);
      writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
      expect(openFileLimit(file)).toBeUndefined();
      expect(openFileLimit(join(dir, 'missing'))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
