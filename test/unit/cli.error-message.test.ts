/**
 * What the command prints for an error: the cause a user can act on, never `UnknownError` or `Workflow
 * execution failed`, and never a secret.
 */
import { describe, expect, it } from 'vitest';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import { userMessage, type ErrorContext } from '../../cli/error-message.ts';

const SECRET = 'wrong-secret-0123';
const context: ErrorContext = { s3Endpoint: () => 'http://127.0.0.1:9000' };

/** An S3 error as the SDK raises it: a code and a message when the answer had a body, else neither. */
function s3Error(status: number, code?: string, message?: string): S3ServiceException {
  return new S3ServiceException({
    name: code ?? 'Unknown',
    message: message ?? 'UnknownError',
    $fault: 'client',
    $metadata: { httpStatusCode: status },
    ...(code ? { Code: code } : {}),
  } as ConstructorParameters<typeof S3ServiceException>[0]);
}

describe('userMessage', () => {
  it('says S3 refused the credentials, naming the endpoint and the setting, never the secret', async () => {
    const signature = await userMessage(
      s3Error(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match'),
      context,
    );
    expect(signature).toMatch(/S3 at http:\/\/127\.0\.0\.1:9000 refused the request's signature/);
    expect(signature).toMatch(/secret access key/);
    expect(signature).not.toContain(SECRET);
    const keyId = await userMessage(s3Error(403, 'InvalidAccessKeyId'), context);
    expect(keyId).toMatch(/does not know the access key id/);
  });

  it('asks S3 why when a refusal came without a reason (a HEAD request)', async () => {
    const withProbe: ErrorContext = {
      ...context,
      probeS3: async () => {
        throw s3Error(403, 'SignatureDoesNotMatch');
      },
    };
    expect(await userMessage(s3Error(403), withProbe)).toMatch(/refused the request's signature/);
    // The probe passes: these credentials work, that object is not theirs to read.
    const allowed: ErrorContext = { ...context, probeS3: async () => undefined };
    expect(await userMessage(s3Error(403), allowed)).toMatch(/denied access/);
    // No probe: still not `UnknownError`.
    expect(await userMessage(s3Error(403), context)).toMatch(/refused the request \(HTTP 403/);
  });

  it("prints a workflow's failure by its cause, not `Workflow execution failed`", async () => {
    const cause = new ActivityFailure(
      'Activity task failed',
      'prepareManifest',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      undefined,
      ApplicationFailure.nonRetryable('manifest refused: line 1: column ...', 'ManifestError'),
    );
    const failed = new WorkflowFailedError(
      'Workflow execution failed',
      cause,
      RetryState.NON_RETRYABLE_FAILURE,
    );
    expect(await userMessage(failed, context)).toBe('workflow failed: manifest refused: line 1: column ...');
    const cancelled = new WorkflowFailedError(
      'Workflow execution cancelled',
      new CancelledFailure('Workflow canceled'),
      RetryState.NON_RETRYABLE_FAILURE,
    );
    expect(await userMessage(cancelled, context)).toBe('workflow cancelled');
  });

  it('keeps any other message as it is', async () => {
    expect(await userMessage(new Error('no such file: a.wav'), context)).toBe('no such file: a.wav');
  });
});
