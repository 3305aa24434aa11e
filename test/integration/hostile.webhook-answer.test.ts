/**
 * A webhook receiver cannot take a worker's memory (issue 41, finding 2), on the real stack: the
 * product's worker process (every queue, as workers/all.ts runs them) delivers one stored event to a
 * receiver on loopback that answers 200 with a 1-GiB body, streamed lazily as the worker reads it. The
 * worker reads a few KiB of it and closes the connection: the delivery is not counted (it gives up with
 * the reason, the delivery's window being one second), the receiver sent a few MiB at most, and the
 * worker's peak resident memory (the kernel's VmHWM) rose by far less than the gigabyte it was offered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { structuredJson } from '../../activities/events/cloud-event.ts';
import { eventId } from '../../activities/events/event-id.ts';
import { eventKey } from '../../activities/events/event-store.ts';
import { eventDeliveryWorkflowId } from '../../workflows/event-delivery.ts';
import type { EmittedEvent } from '../../schemas/events.ts';
import { taskQueues, type Config } from '../../schemas/config.ts';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import { childWorkers, uniquePrefix, withPrefix } from '../helpers/pipeline.ts';
import { objectStore, stackConfig, temporalClient } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

/** The kernel's peak resident set of a process (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(/(\d+)/.exec(line!)![1]) * 1024;
}

const dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-webhook-'));
let config: Config;
let server: Server;
let workers: ManagedProcess | undefined;
/** Bytes the receiver wrote, and a promise settled when each answer's connection closed. */
const sent = { bytes: 0, requests: 0 };
const closed: Promise<void>[] = [];

/** Writes 1 GiB of one reused chunk as fast as the worker reads it: nothing is allocated here. */
function answerOneGiB(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    let written = 0;
    const more = () => {
      while (written < GIB && !res.destroyed) {
        written += CHUNK.length;
        sent.bytes += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', more);
      }
      if (written >= GIB) res.end();
    };
    res.once('close', () => resolve());
    res.writeHead(200, { 'content-type': 'application/json' });
    more();
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      sent.requests += 1;
      closed.push(answerOneGiB(res));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  config = withPrefix(stackConfig(), uniquePrefix('hostile-webhook'));
  workers = childWorkers(config, join(dir, 'workers.log'), {
    CALLPIPE_EVENTS_WEBHOOK_URL: `http://127.0.0.1:${port}/hook`,
    CALLPIPE_EVENTS_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  });
  await workers.start();
});

afterAll(async () => {
  await workers?.stop();
  server?.closeAllConnections();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a webhook answering 200 with 1 GiB', () => {
  it('is read for a few KiB, not counted delivered, and leaves the worker’s memory as it was', async () => {
    const pid = workers!.pid!;
    const before = peakRss(pid);
    const run = runId();
    const id = eventId({
      type: 'callpipe.call.completed',
      subject: `call-${run}`,
      workflowId: run,
      runId: run,
    });
    const time = new Date().toISOString();
    const key = eventKey({ bucket: config.s3.bucket, prefix: `hostile-webhook-${run}/` }, time, id);
    const line = structuredJson({
      id,
      type: 'callpipe.call.completed',
      source: `s3://${config.s3.bucket}/hostile-webhook-${run}/`,
      subject: `call-${run}`,
      time,
      data: { callId: `call-${run}` },
    });
    await objectStore().put(key, `${line}\n`);
    const emitted: EmittedEvent = {
      event: { id, type: 'callpipe.call.completed', bucket: config.s3.bucket, key, callId: `call-${run}` },
      sinks: ['webhook:0'],
      // A generous bound for the exchange (reading the gigabyte whole fits in it); a window of one
      // second, so the first failed attempt gives up with its reason instead of retrying.
      policy: { initialSeconds: 1, maxSeconds: 1, forSeconds: 1, requestTimeoutSeconds: 300 },
    };
    const { client, close } = await temporalClient(config);
    try {
      const handle = await client.workflow.start('eventDelivery', {
        taskQueue: taskQueues(config).workflows,
        workflowId: eventDeliveryWorkflowId(id),
        args: [emitted],
      });
      const outcome = await handle.result().then(
        (r: unknown) => ({ delivered: r }),
        (e: unknown) => ({ failed: e }),
      );
      expect(outcome).toHaveProperty('failed');
      const failure = (outcome as { failed: WorkflowFailedError }).failed;
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(failure.cause?.message).toMatch(
        /not delivered to webhook:0: answered HTTP 200 with a body of more than 16 KiB: cut off there, not counted as delivered/,
      );
    } finally {
      await close();
    }
    await Promise.all(closed);
    expect(sent.requests).toBe(1);
    // Socket buffers on both sides, not the gigabyte.
    expect(sent.bytes).toBeLessThan(64 * MIB);
    const rise = peakRss(pid) - before;
    console.log(
      `worker peak RSS ${Math.round(before / MIB)} MiB before, rose by ${Math.round(rise / MIB)} MiB`,
    );
    expect(rise).toBeLessThan(128 * MIB);
  });
});
