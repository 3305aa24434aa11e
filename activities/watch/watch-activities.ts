/**
 * The watch's own activities (task queue `callpipe`, beside the workflows; object-storage listings,
 * HEADs and queue reads, no CPU-heavy work): list a page of the watched prefix, admit settled objects,
 * read S3 event notifications from SQS, and judge the account's session room for a watched call's plan.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ObjectStore } from '../storage/object-store.ts';
import type { CallIdRule } from '../storage/call-id.ts';
import type { S3Config } from '../../schemas/config.ts';
import { listWatchedObjects, type ListWatchedInput } from './list-objects.ts';
import { admitWatchedObjects, type AdmitInput } from './admit.ts';
import { receiveNotifications, sqsClientFor, type ReceiveInput } from './notifications.ts';
import { sessionRoom, type SessionRoomDeps, type SessionRoomInput } from './session-room.ts';

export type { ListWatchedInput, AdmitInput, ReceiveInput, SessionRoomInput };

export interface WatchActivityDeps {
  store: ObjectStore;
  /** The S3 settings: SQS takes the same static keys (the local stack) or the same default chain. */
  s3: S3Config;
  callIds?: CallIdRule;
  /** Temporal, for the account's session room (session-room.ts). */
  room?: SessionRoomDeps;
}

export function createWatchActivities({
  store,
  s3,
  callIds = { mode: 'auto' },
  room = {},
}: WatchActivityDeps) {
  const queues = new Map<string, SQSClient>();
  const queue = (url: string) => {
    let client = queues.get(url);
    if (!client) queues.set(url, (client = sqsClientFor(url, s3)));
    return client;
  };
  return {
    /** One page of the watched prefix after a key, name/size/date filters applied, done calls left out. */
    listWatchedObjects: (input: ListWatchedInput) => listWatchedObjects(store, input, callIds),
    /** Settled objects looked at once more and judged: start, changed, gone or skipped (and why). */
    admitWatchedObjects: (input: AdmitInput) => admitWatchedObjects(store, input, callIds),
    /** S3 event notifications from the watch's SQS queue (long poll), deleted once read. */
    receiveNotifications: (input: ReceiveInput) => receiveNotifications(queue(input.queueUrl), input),
    /** The account's free sessions and waiting ones, which a watched call's latency plan is cut to. */
    sessionRoom: (input: SessionRoomInput) => sessionRoom(room, input),
  };
}

export type WatchActivities = ReturnType<typeof createWatchActivities>;
