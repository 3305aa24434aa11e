/**
 * Stable event ids: the same fact of the same run has the same id however often it is emitted (an
 * activity's retry, a delivery's), so receivers de-duplicate by it (Standard Webhooks' `webhook-id`,
 * CloudEvents' `id`). Derived from the event's type, its subject (call or batch id) and the run's
 * identity (workflow id and run id): a call processed again (`--redo`) is a new run, so new events.
 *
 * Letters only: ids appear in object keys, where a run of digits would read as a number someone said.
 */
import { createHash } from 'node:crypto';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** 26 letters: about 122 bits, as a UUID. */
const LENGTH = 26;

export function eventId(parts: { type: string; subject: string; workflowId: string; runId: string }): string {
  const digest = createHash('sha256')
    .update([parts.type, parts.subject, parts.workflowId, parts.runId].join('\n'))
    .digest();
  let id = '';
  for (let i = 0; i < LENGTH; i++) id += LETTERS[digest[i]! % LETTERS.length];
  return `evt_${id}`;
}
