/**
 * Counts every request an S3 client sends, by operation and by the activity type that sent it
 * (activities/metrics.ts): a middleware after the SDK's retry step, so each attempt of a retried request
 * counts, as each is billed. The activity is the one whose context the request runs in (`none` outside
 * an activity: the CLI, a workflow's client), so what each stage reads and writes shows apart.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { activityContext } from '../activity-context.ts';
import { metrics } from '../metrics.ts';

export function meterS3Requests(client: S3Client): S3Client {
  client.middlewareStack.add(
    (next, context) => (args) => {
      const operation = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      metrics.s3Request(operation, activityContext()?.info.activityType ?? 'none');
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'callpipeS3RequestMeter' },
  );
  return client;
}
