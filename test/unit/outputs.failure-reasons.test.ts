/**
 * Reasons a user can act on, for failures whose own message gives none: this host's clock off from S3's
 * (S3 answers RequestTimeTooSkewed, or a bodiless 403 to a HEAD), no space left on a disk (a real ENOSPC
 * from the kernel, from /dev/full; the S3 server's InternalError when its disk is full), as the activity
 * boundary reports them. The same refusals from a real S3 server: test/integration/hostile.outputs.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { actionableReason, classifyFailure } from '../../activities/failure-classifier.ts';
import { toActivityFailure } from '../../activities/failure-boundary.ts';
import { describeS3Refusal, s3ClockSkewMs } from '../../activities/storage/s3-errors.ts';
import { FAILURE } from '../../schemas/retry-table.ts';

const DAY = 24 * 3600_000;

/** An S3 error as the SDK builds it from an answer (its `Date` header kept on `$response`). */
function s3Error(status: number, name: string, message: string, serverDate?: Date): S3ServiceException {
  const err = new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
  err.message = message;
  Object.defineProperty(err, '$response', {
    value: { statusCode: status, headers: serverDate ? { date: serverDate.toUTCString() } : {} },
  });
  return err;
}

/** A real ENOSPC: the kernel's answer to a write on /dev/full. */
function enospc(): Error {
  try {
    writeFileSync('/dev/full', 'x');
  } catch (err) {
    return err as Error;
  }
  throw new Error('/dev/full accepted a write');
}

const message = (err: unknown) => (toActivityFailure(err) as Error).message;

describe("this host's clock off from S3's", () => {
  afterEach(() => vi.useRealTimers());

  it('RequestTimeTooSkewed says by how much and what to fix, and is worth another attempt', () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-02T10:00:00Z'), toFake: ['Date'] });
    const err = s3Error(
      403,
      'RequestTimeTooSkewed',
      "The difference between the request time and the server's time is too large.",
      new Date('2026-03-01T09:58:00Z'),
    );
    expect(s3ClockSkewMs(err)).toBe(DAY + 2 * 60_000);
    expect(message(err)).toBe(
      "S3 refused the request's time: this host's clock is 1 d 00 h ahead of S3's (S3 accepts 15 minutes): " +
        "fix the host's time (NTP, `timedatectl`)",
    );
    // The SDK has taken S3's clock from the answer: the next attempt is signed on it.
    expect(classifyFailure(err)).toBe(FAILURE.StorageUnavailable);
    expect((toActivityFailure(err) as ApplicationFailure).nonRetryable).toBe(false);
  });

  it("a HEAD's bodiless 403 (`UnknownError`) is read by its Date, on the command line too", () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-01T10:00:00Z'), toFake: ['Date'] });
    const behind = s3Error(403, 'Forbidden', 'UnknownError', new Date('2026-03-01T13:05:00Z'));
    expect(message(behind)).toMatch(
      /^S3 refused the request's time: this host's clock is 3 h 05 min behind S3's/,
    );
    expect(describeS3Refusal(behind, 'http://s3.local')).toMatch(
      /^S3 at http:\/\/s3\.local refused the request's time/,
    );
    // A 403 on time: the credentials, not the clock.
    const onTime = s3Error(403, 'Forbidden', 'UnknownError', new Date('2026-03-01T10:00:30Z'));
    expect(s3ClockSkewMs(onTime)).toBeUndefined();
    expect(message(onTime)).not.toMatch(/clock/);
    // A worker's refused credentials get the command's words, not the SDK's `UnknownError`.
    expect(message(onTime)).toMatch(
      /^S3 refused the request \(HTTP 403, no reason given\): .*CALLPIPE_S3_SECRET_ACCESS_KEY/,
    );
    expect(classifyFailure(onTime)).toBe(FAILURE.StorageRefused);
  });
});

describe('no space left', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('a real ENOSPC names the full folder, with what is free there', () => {
    const home = resolve('/srv/callpipe-home');
    vi.stubEnv('CALLPIPE_HOME', home);
    const err = enospc();
    expect(err.message).toBe('ENOSPC: no space left on device, write');
    const free = (dir: string) => (dir === home ? 4096 : 10e9);
    expect(actionableReason(err, free)).toBe(
      `no space left on ${home} (0.0 MB free) during write: free space there (CALLPIPE_HOME and the temp ` +
        "folder hold the worker's files) and run the call again",
    );
    // Through the boundary, on this host's real disks: still no space, and where to look.
    expect(message(err)).toMatch(/^no space left on .* during write: free space there \(CALLPIPE_HOME/);
  });

  it("the S3 server's InternalError when its disk is full", () => {
    // What SeaweedFS answers a PutObject when the disk under its data folder is full.
    const err = s3Error(500, 'InternalError', 'We encountered an internal error, please try again.');
    const home = resolve('/srv/callpipe-home');
    vi.stubEnv('CALLPIPE_HOME', home);
    expect(actionableReason(err, (dir) => (dir === home ? 0 : 10e9))).toBe(
      `no space left on ${home} (0.0 MB free): S3 answered InternalError (HTTP 500), unable to store there; free space and run the call again`,
    );
    expect(actionableReason(err, () => 10e9)).toMatch(
      /^S3 answered InternalError \(HTTP 500\): .* a full disk where it keeps its data is the usual cause/,
    );
    expect(classifyFailure(err)).toBe(FAILURE.StorageUnavailable);
  });

  it('ffmpeg that could not write its output', () => {
    const err = Object.assign(new Error('ffmpeg exited 1: Error writing trailer'), {
      name: 'FfmpegError',
      stderrTail: `[out#0/wav] Error muxing a packet\n${tmpdir()}/x.wav: No space left on device`,
    });
    expect(actionableReason(err, () => 0)).toMatch(
      /^no space left on .*\(0\.0 MB free\).*: ffmpeg could not write its output/,
    );
  });
});
