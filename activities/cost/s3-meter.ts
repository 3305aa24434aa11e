/**
 * Counts every request an S3 client sends, by operation (activities/metrics.ts): a middleware after the
 * SDK's retry step, so each attempt of a retried request counts, as each is billed.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { metrics } from '../metrics.ts';

export function meterS3Requests(client: S3Client): S3Client {
  client.middlewareStack.add(
    (next, context) => (args) => {
      metrics.s3Request(String(context.commandName ?? 'unknown').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'callpipeS3RequestMeter' },
  );
  return client;
}
