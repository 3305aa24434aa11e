/** activities/watch/notifications.ts: S3 event notifications as SQS delivers them (AWS's formats). */
import { describe, expect, it } from 'vitest';
import {
  decodeEventKey,
  notificationsOf,
  regionOfQueueUrl,
  s3EventsOf,
} from '../../activities/watch/notifications.ts';

const source = { bucket: 'calls', prefix: 'incoming/' };

function s3Event(eventName: string, key: string, bucket = 'calls', size = 1234) {
  return JSON.stringify({
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'ap-northeast-1',
        eventTime: '2026-11-26T09:00:00.000Z',
        eventName,
        s3: {
          s3SchemaVersion: '1.0',
          bucket: { name: bucket, arn: `arn:aws:s3:::${bucket}` },
          object: { key, size, eTag: '0123abcd', sequencer: '0055AED6DCD90281E5' },
        },
      },
    ],
  });
}

describe('S3 event notifications', () => {
  it('reads a created object: its key URL-decoded (+ is a space), size, ETag and time', () => {
    const events = s3EventsOf(
      s3Event('ObjectCreated:CompleteMultipartUpload', 'incoming/%E9%80%9A%E8%A9%B1+1.wav'),
    );
    expect(events).toEqual([
      {
        kind: 'created',
        bucket: 'calls',
        object: {
          key: 'incoming/通話 1.wav',
          etag: '0123abcd',
          size: 1234,
          modifiedMs: Date.parse('2026-11-26T09:00:00Z'),
        },
      },
    ]);
    expect(decodeEventKey('a%2Bb+c')).toBe('a+b c');
  });

  it('reads the SNS envelope and EventBridge forms, and a test event as no event', () => {
    const sns = JSON.stringify({
      Type: 'Notification',
      Message: s3Event('ObjectCreated:Put', 'incoming/a.wav'),
    });
    expect(s3EventsOf(sns)?.map((e) => e.object.key)).toEqual(['incoming/a.wav']);
    const bridge = JSON.stringify({
      source: 'aws.s3',
      'detail-type': 'Object Created',
      time: '2026-11-26T09:00:00Z',
      detail: { bucket: { name: 'calls' }, object: { key: 'incoming/b c.wav', size: 9, etag: 'ff' } },
    });
    expect(s3EventsOf(bridge)).toEqual([
      {
        kind: 'created',
        bucket: 'calls',
        object: expect.objectContaining({ key: 'incoming/b c.wav', size: 9, etag: 'ff' }),
      },
    ]);
    expect(
      s3EventsOf(JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'calls' })),
    ).toEqual([]);
    expect(s3EventsOf('not json')).toBeUndefined();
    expect(s3EventsOf(JSON.stringify({ hello: 1 }))).toBeUndefined();
  });

  it('keeps only the watched bucket and prefix, and counts what it left', () => {
    const found = notificationsOf(
      [
        s3Event('ObjectCreated:Put', 'incoming/a.wav'),
        s3Event('ObjectCreated:Put', 'elsewhere/b.wav'),
        s3Event('ObjectCreated:Put', 'incoming/c.wav', 'other-bucket'),
        s3Event('ObjectRemoved:Delete', 'incoming/d.wav'),
        JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent' }),
        '{broken',
      ],
      source,
    );
    expect(found.created.map((o) => o.key)).toEqual(['incoming/a.wav']);
    expect(found.removed).toEqual(['incoming/d.wav']);
    expect(found).toMatchObject({ messages: 6, ignored: 3, unreadable: 1 });
  });

  it('finds the region of an AWS queue URL, none for another server', () => {
    expect(regionOfQueueUrl('https://sqs.ap-northeast-1.amazonaws.com/123456789012/calls')).toBe(
      'ap-northeast-1',
    );
    expect(regionOfQueueUrl('http://127.0.0.1:4566/123456789012/calls')).toBeUndefined();
  });
});
