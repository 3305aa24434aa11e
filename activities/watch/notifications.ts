/**
 * S3 event notifications read from an SQS queue (`callpipe watch --sqs <queue url>`): the AWS format as
 * S3 sends it to SQS directly, wrapped by SNS, or forwarded by EventBridge. Only objects of the watched
 * bucket under its prefix are taken; every message read is deleted (a queue serves one watch: the
 * listing's reconciliation finds whatever a lost or foreign message would have named).
 */
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { z } from 'zod';
import type { S3Config } from '../../schemas/config.ts';
import type { WatchNotifications, WatchObject, WatchSource } from '../../schemas/watch.ts';

/** SQS answers at most 10 messages per receive and long-polls at most 20 s. */
const SQS_MAX_MESSAGES = 10;
const SQS_MAX_WAIT_SECONDS = 20;
/** Receives one activity makes at most before it hands what it read to the workflow. */
const RECEIVES_PER_CALL = 10;

const s3RecordSchema = z.object({
  eventName: z.string(),
  eventTime: z.string().optional(),
  s3: z.object({
    bucket: z.object({ name: z.string() }),
    object: z.object({
      key: z.string(),
      size: z.number().optional(),
      eTag: z.string().optional(),
    }),
  }),
});
const s3EventSchema = z.object({ Records: z.array(z.unknown()) });
const snsEnvelopeSchema = z.object({ Type: z.literal('Notification'), Message: z.string() });
const eventBridgeSchema = z.object({
  source: z.literal('aws.s3'),
  'detail-type': z.string(),
  time: z.string().optional(),
  detail: z.object({
    bucket: z.object({ name: z.string() }),
    object: z.object({ key: z.string(), size: z.number().optional(), etag: z.string().optional() }),
  }),
});

/** One event of a message: an object created or removed, in any bucket. */
export interface S3Event {
  kind: 'created' | 'removed' | 'other';
  bucket: string;
  object: WatchObject;
}

/** S3 writes keys in event notifications URL-encoded, with `+` for a space. */
export function decodeEventKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

const kindOf = (name: string): S3Event['kind'] =>
  /^(s3:)?ObjectCreated:|^Object Created$/.test(name)
    ? 'created'
    : /^(s3:)?ObjectRemoved:|^Object Deleted$/.test(name)
      ? 'removed'
      : 'other';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The S3 events of one message body; undefined when it is not an S3 notification at all. A test event
 * (`s3:TestEvent`, sent when notifications are configured) is a notification with no events.
 */
export function s3EventsOf(body: string): S3Event[] | undefined {
  let doc = parseJson(body);
  const sns = snsEnvelopeSchema.safeParse(doc);
  if (sns.success) doc = parseJson(sns.data.Message);
  if ((doc as { Event?: string } | undefined)?.Event === 's3:TestEvent') return [];
  const bridge = eventBridgeSchema.safeParse(doc);
  if (bridge.success) {
    const { detail } = bridge.data;
    const time = bridge.data.time ? Date.parse(bridge.data.time) : undefined;
    return [
      {
        kind: kindOf(bridge.data['detail-type']),
        bucket: detail.bucket.name,
        // EventBridge gives the key as it is (not URL-encoded).
        object: {
          key: detail.object.key,
          etag: detail.object.etag,
          size: detail.object.size ?? 0,
          modifiedMs: Number.isNaN(time) ? undefined : time,
        },
      },
    ];
  }
  const s3 = s3EventSchema.safeParse(doc);
  if (!s3.success) return undefined;
  const events: S3Event[] = [];
  for (const raw of s3.data.Records) {
    const record = s3RecordSchema.safeParse(raw);
    if (!record.success) continue;
    const { object, bucket } = record.data.s3;
    const time = record.data.eventTime ? Date.parse(record.data.eventTime) : undefined;
    let key: string;
    try {
      key = decodeEventKey(object.key);
    } catch {
      continue;
    }
    events.push({
      kind: kindOf(record.data.eventName),
      bucket: bucket.name,
      object: {
        key,
        etag: object.eTag?.replaceAll('"', ''),
        size: object.size ?? 0,
        modifiedMs: time === undefined || Number.isNaN(time) ? undefined : time,
      },
    });
  }
  return events;
}

/** What a batch of message bodies says about the watched prefix. */
export function notificationsOf(bodies: string[], source: WatchSource): WatchNotifications {
  const out: WatchNotifications = {
    created: [],
    removed: [],
    messages: bodies.length,
    ignored: 0,
    unreadable: 0,
  };
  for (const body of bodies) {
    const events = s3EventsOf(body);
    if (!events) {
      out.unreadable += 1;
      continue;
    }
    const ours = events.filter(
      (e) => e.kind !== 'other' && e.bucket === source.bucket && e.object.key.startsWith(source.prefix),
    );
    if (ours.length === 0) out.ignored += 1;
    for (const e of ours) {
      if (e.kind === 'created') out.created.push(e.object);
      else out.removed.push(e.object.key);
    }
  }
  return out;
}

/** The region an AWS queue URL names (`https://sqs.<region>.amazonaws.com/…`), else undefined. */
export function regionOfQueueUrl(queueUrl: string): string | undefined {
  return /^sqs[.-]([a-z0-9-]+)\.amazonaws\.com/.exec(new URL(queueUrl).host)?.[1];
}

/**
 * The SQS client of a queue: its URL's origin as the endpoint (AWS or an SQS-compatible server), the
 * region from the URL, else S3's; callpipe's static S3 keys when configured (the local stack), else the
 * SDK's default chain, as for S3.
 */
export function sqsClientFor(queueUrl: string, s3: S3Config): SQSClient {
  const url = new URL(queueUrl);
  return new SQSClient({
    endpoint: url.origin,
    region: regionOfQueueUrl(queueUrl) ?? s3.region ?? 'us-east-1',
    credentials:
      s3.accessKeyId && s3.secretAccessKey
        ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, sessionToken: s3.sessionToken }
        : undefined,
    maxAttempts: 1,
  });
}

export interface ReceiveInput {
  queueUrl: string;
  source: WatchSource;
  /** Long-poll this long for the first message (at most 20 s). */
  waitSeconds: number;
}

/**
 * Long-polls the queue once, then takes what else is waiting (up to a few receives), deletes every
 * message read, and returns what they say about the watched prefix.
 */
export async function receiveNotifications(
  client: SQSClient,
  input: ReceiveInput,
): Promise<WatchNotifications> {
  const messages: Message[] = [];
  for (let i = 0; i < RECEIVES_PER_CALL; i++) {
    const res = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: input.queueUrl,
        MaxNumberOfMessages: SQS_MAX_MESSAGES,
        WaitTimeSeconds:
          i === 0 ? Math.min(SQS_MAX_WAIT_SECONDS, Math.max(0, Math.round(input.waitSeconds))) : 0,
      }),
    );
    const got = res.Messages ?? [];
    messages.push(...got);
    if (got.length < SQS_MAX_MESSAGES) break;
  }
  const found = notificationsOf(
    messages.map((m) => m.Body ?? ''),
    input.source,
  );
  for (let i = 0; i < messages.length; i += SQS_MAX_MESSAGES) {
    const batch = messages.slice(i, i + SQS_MAX_MESSAGES);
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: input.queueUrl,
        Entries: batch.map((m, n) => ({ Id: String(n), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  return found;
}
