/**
 * Call events on the real stack (Temporal, the S3 server, the emulator, this file's own workers on a
 * task-queue prefix of its own, configured with a webhook and a Slack URL on loopback): a batch of a
 * complaint call and a recording that is not audio raises an alert, a completed call, a failed call and
 * the batch's end. The receiver is down while the batch runs — the batch and its calls complete anyway,
 * with the deliveries still being retried — then comes up, answers each event's first request with an
 * error (a lost acknowledgement), and gets every event again: each id, after de-duplication, once,
 * every request verified by the Standard Webhooks library.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { freePort } from '../../cli/stack/ports.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { scriptedCall } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { eventDeliveryWorkflowId } from '../../workflows/event-delivery.ts';
import { EVENT_TYPES, type CallEventData } from '../../schemas/events.ts';
import type { Config } from '../../schemas/config.ts';
import { callpipe as runCli } from '../helpers/cli.ts';
import { inProcessWorkers, uniquePrefix, withPrefix } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';
import { until } from '../helpers/until.ts';

interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

const run = runId();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
let dir: string;
let pc: PipelineClient;
let config: Config;
let port: number;
let workers: { stop: () => Promise<void> } | undefined;
let receiverServer: Server | undefined;
/** Every verified request, in order; ids acknowledged; requests that failed verification. */
const requests: Received[] = [];
const acknowledged = new Map<string, Received>();
const slack: { text: string }[] = [];
let badSignatures = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-events-'));
  port = await freePort();
  const base = withPrefix(stackConfig(), uniquePrefix('events'));
  config = {
    ...base,
    events: {
      ...base.events,
      webhookUrls: [`http://127.0.0.1:${port}/hook`],
      webhookSecret: secret,
      slackUrl: `http://127.0.0.1:${port}/slack`,
      // Seconds, not the deployment's minutes: the receiver is down for a while, not an hour.
      retryInitialSeconds: 1,
      retryMaxSeconds: 2,
      requestTimeoutSeconds: 5,
    },
  };
  pc = await connectPipeline(config);
  workers = await inProcessWorkers(config);
}, 300_000);

afterAll(async () => {
  await workers?.stop();
  receiverServer?.closeAllConnections();
  receiverServer?.close();
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The receiver: verifies each request; answers an event's first request 500, the next ones 204. */
async function receiverUp(): Promise<void> {
  const webhook = new Webhook(secret);
  receiverServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (req.url === '/slack') {
        slack.push(JSON.parse(body) as { text: string });
        return void res.writeHead(200).end('ok');
      }
      let event: Received;
      try {
        event = webhook.verify(body, req.headers as Record<string, string>) as Received;
      } catch {
        badSignatures += 1;
        return void res.writeHead(401).end();
      }
      if (req.headers['webhook-id'] !== event.id) badSignatures += 1;
      requests.push(event);
      const first = requests.filter((r) => r.id === event.id).length === 1;
      if (first) return void res.writeHead(500).end();
      acknowledged.set(event.id, event);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiverServer!.listen(port, '127.0.0.1', resolve));
}

/** A batch of a complaint call and a recording that is not audio, run while the receiver is down. */
async function runBatchWithReceiverDown() {
  const prefix = `recordings/events-${run}/`;
  const { script } = scriptedCall({
    durationSeconds: 50,
    stereo: true,
    complaint: true,
    identity: false,
    seed: 7,
  });
  const complaint = join(dir, 'complaint.wav');
  await renderFixture(script, complaint, { sampleRate: 8000 });
  await pc.store.putFile(`${prefix}complaint.wav`, complaint);
  await pc.store.put(`${prefix}broken.wav`, 'this is not a recording');
  const output = { bucket: pc.store.bucket, prefix: `events-out-${run}/` };
  const batchId = `events-${run}`;

  // The receiver is down: the batch and its calls complete regardless.
  const started = await startBackfill(pc, {
    batchId,
    source: { kind: 'prefix', bucket: pc.store.bucket, prefix },
    output,
  });
  const batch = await started.handle.result();
  expect(batch).toMatchObject({ status: 'done', done: 1, failed: 1 });
  return { batch, batchId, output };
}

/** The batch's four events in S3 before any delivery, each named by its id; their ids. */
async function expectEventsStored(output: { prefix: string }): Promise<string[]> {
  // Every event is in S3 before any delivery, named by its id: a call's under the call's (pseudonymous)
  // id, so it is found and erased with the call; the batch's at the day's level.
  const keys = await until(
    'the events in S3',
    async () => (await pc.store.listPage(`${output.prefix}events/`)).objects.map((o) => o.key),
    (k) => k.length >= 4,
  );
  // Four events, and nothing given up (a give-up would be recorded under events/failed/).
  expect(keys).toHaveLength(4);
  for (const key of keys)
    expect(key).toMatch(/^events-out-[a-z]+\/events\/\d{4}-\d{2}-\d{2}\/([^/]+\/)?evt_[a-z]{26}\.ndjson$/);
  const underCall = (k: string) => /\/events\/[^/]+\/[^/]+\/evt_/.test(k);
  expect(keys.filter(underCall)).toHaveLength(3);
  const stored = await Promise.all(
    keys.map(async (k) => JSON.parse(await pc.store.getText(k)) as Received & { specversion: string }),
  );
  expect(stored.map((e) => e.type).sort()).toEqual(
    [
      EVENT_TYPES.batchCompleted,
      EVENT_TYPES.callAlert,
      EVENT_TYPES.callCompleted,
      EVENT_TYPES.callFailed,
    ].sort(),
  );
  expect(stored.every((e) => e.specversion === '1.0')).toBe(true);
  return stored.map((e) => e.id);
}

/** Deliveries still retried while the receiver is down, and shown so by `callpipe events status`. */
async function expectDeliveriesRetried(ids: string[], batchId: string): Promise<void> {
  // A dead receiver delays no call: the calls and the batch are done, their deliveries still retried.
  for (const id of ids) {
    const d = await pc.client.workflow.getHandle(eventDeliveryWorkflowId(id)).describe();
    expect(d.status.name, id).toBe('RUNNING');
  }
  // `callpipe events status` shows them being retried (visibility may lag a moment behind).
  const status = await until(
    'events status to show the pending deliveries',
    async () => {
      const out = await runCli(['events', 'status', '--batch', batchId, '--json'], inject('stackEnv'));
      expect(out.code, out.stderr).toBe(0);
      return JSON.parse(out.stdout) as {
        pending: number;
        failed: number;
        pendingRows: { eventId: string }[];
      };
    },
    (s) => s.pending === 4,
    60_000,
  );
  expect(status.failed).toBe(0);
  expect(status.pendingRows.map((r) => r.eventId).sort()).toEqual([...ids].sort());
}

/** Every event acknowledged once the receiver is up: each id at least twice, once after de-duplication. */
async function expectEachDeliveredOnce(ids: string[]): Promise<void> {
  // The receiver comes up: every event arrives (again after a lost acknowledgement), each id once.
  await until(
    'every event acknowledged',
    async () => acknowledged.size,
    (n) => n === 4,
  );
  await until(
    'the Slack message',
    async () => slack.length,
    (n) => n >= 1,
  );
  expect(badSignatures).toBe(0);
  expect([...acknowledged.keys()].sort()).toEqual([...ids].sort());
  // At least once: every id came at least twice (the first answer was an error), and nothing else came.
  for (const id of ids) expect(requests.filter((r) => r.id === id).length, id).toBeGreaterThanOrEqual(2);
  expect(new Set(requests.map((r) => r.id)).size).toBe(4);
  for (const id of ids) {
    const d = await pc.client.workflow.getHandle(eventDeliveryWorkflowId(id)).describe();
    expect(['RUNNING', 'COMPLETED'], id).toContain(d.status.name);
  }
  await until(
    'the deliveries completed',
    async () =>
      Promise.all(
        ids.map(
          async (id) =>
            (await pc.client.workflow.getHandle(eventDeliveryWorkflowId(id)).describe()).status.name,
        ),
      ),
    (s) => s.every((x) => x === 'COMPLETED'),
    60_000,
  );
}

/** What each event says: the alert's category and severity, the outcomes, the batch's report, Slack's text. */
async function expectEventContents(batch: { reportJsonKey?: string }, batchId: string): Promise<void> {
  // The complaint raised an alert with its category and severity; the other events say what happened.
  const byType = new Map([...acknowledged.values()].map((e) => [e.type, e]));
  const alert = byType.get(EVENT_TYPES.callAlert)!.data as CallEventData;
  expect(alert.alerts).toContainEqual({ category: 'complaint', severity: 'warning' });
  expect(alert.categories).toContain('complaint');
  const completed = byType.get(EVENT_TYPES.callCompleted)!.data as CallEventData;
  expect(completed).toMatchObject({ callId: alert.callId, outcome: 'done', batchId });
  expect(await pc.store.exists(completed.resultKey!)).toBe(true);
  expect(completed.scorecard?.max).toBeGreaterThan(0);
  const failed = byType.get(EVENT_TYPES.callFailed)!.data as CallEventData;
  expect(failed.outcome).toBe('failed');
  expect(failed.reason).toBeTruthy();
  expect(await pc.store.exists(failed.errorKey!)).toBe(true);
  expect(byType.get(EVENT_TYPES.batchCompleted)!.data).toMatchObject({
    batchId,
    status: 'done',
    reportJsonKey: batch.reportJsonKey,
  });
  // Slack got the alert, in words.
  expect(slack[0]!.text).toContain('complaint (warning)');
  expect(slack[0]!.text).toContain(alert.callId);
}

describe('call events', () => {
  it('delivers every event of a batch at least once, each id once after de-duplication, though the receiver was down', async () => {
    const { batch, batchId, output } = await runBatchWithReceiverDown();
    const ids = await expectEventsStored(output);
    await expectDeliveriesRetried(ids, batchId);
    // The receiver comes up: every event arrives (again after a lost acknowledgement), each id once.
    await receiverUp();
    await expectEachDeliveredOnce(ids);
    await expectEventContents(batch, batchId);
  }, 900_000);
});
