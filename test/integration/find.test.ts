/**
 * `callpipe find` on the stack's own workers (which make and use the local stack's digest key): three
 * small calls through a manifest backfill, one in which the customer says a mobile number, one whose
 * recording is named by its caller number and time (`08033334444_20261124-1015.wav`), each with a
 * customer id in the manifest's `customer_id` column. `find --phone` in another notation (said, or in the
 * file name) and `find --customer` answer with exactly the calls that hold the value, and where; the command never
 * prints the value asked; and neither the number nor the customer ids are in plaintext in any stored
 * object of the calls (result.json, transcript, page, the tables' Parquet files, the batch's report and
 * its working copy of the manifest).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { callSpec, outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { callIdOf, callIdRuleOf } from '../../activities/storage/call-id.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { phraseDurationSeconds, type FixtureScript } from '../../schemas/synthetic-recording.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { FoundCall } from '../../cli/commands/find.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

/** A short stereo call: the agent asks for a mobile number, the customer says 090-1234-5678 (phrase 213). */
function phoneCall(): FixtureScript {
  const lines: [0 | 1, number][] = [
    [0, 4],
    [0, 203],
    [1, 213],
    [0, 13],
  ];
  const channels: FixtureScript['channels'] = [{ phrases: [] }, { phrases: [] }];
  let t = 0.5;
  for (const [speaker, id] of lines) {
    channels[speaker]!.phrases.push({ id, start: roundSecondsToMs(t) });
    t += phraseDurationSeconds(id) + 0.8;
  }
  return { durationSeconds: Math.ceil(t + 1), background: 'silence', channels };
}

let dir: string;
let pc: PipelineClient;
let output: OutputLocation;
const id = runId();
const tablesPrefix = `find-tables-${id}/`;
const env = () => ({ ...inject('stackEnv'), CALLPIPE_S3_TABLES_PREFIX: tablesPrefix });
const keys: string[] = [];
const callIds: string[] = [];
const customers = [0, 1, 2, 3].map((i) => `CUST-${id}-${i}`);
// The last recording is named as recorders name them: caller number, then date and time.
const names = ['call-0.wav', 'call-1.wav', 'call-2.wav', '08033334444_20261124-1015.wav'];
const PHONE_FORMS = ['090-1234-5678', '09012345678', '1234-5678'];
// The file name's number: the source key and result.json keep it; the tables' source_key masks it,
// and its digest (origin `source`) is what finds the call.
const NAMED_FORMS = ['08033334444', '3333-4444', '3333 4444'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-find-'));
  pc = await connectPipeline(stackConfig());
  output = { ...outputLocation(undefined, pc.config), prefix: `find-${id}/` };
  const paths = [join(dir, 'phone.wav')];
  await renderFixture(phoneCall(), paths[0]!);
  for (const i of [1, 2, 3]) {
    const call = await makeCall(dir, `plain-${i}.wav`, { durationSeconds: 6, stereo: true, seed: 500 + i });
    paths.push(call.path);
  }
  for (const [i, path] of paths.entries()) {
    const key = `recordings/find-${id}/${names[i]}`;
    await pc.store.putFile(key, path);
    keys.push(key);
    // A name with a number gets a pseudonymous id, keyed with the stack's digest key.
    callIds.push(callIdOf({ bucket: pc.store.bucket, key }, callIdRuleOf(pc.config)));
  }
  const manifestKey = `manifests/find-${id}.csv`;
  const csv = `key,customer_id,started_at\n${keys.map((k, i) => `${k},${customers[i]},2026-03-01T10:0${i}:00Z`).join('\n')}\n`;
  await pc.store.put(manifestKey, csv);
  const started = await startBackfill(pc, {
    batchId: `test-find-${id}`,
    source: { kind: 'manifest', bucket: pc.store.bucket, key: manifestKey },
    output,
    redo: true,
    spec: {
      ...callSpec(pc.config, output),
      tables: { bucket: output.bucket, prefix: tablesPrefix, timeZone: 'UTC' },
    },
  });
  const result = await started.handle.result();
  expect(result.tables).toMatchObject({ failed: [] });
});

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function find(...args: string[]): Promise<{ asked: string; calls: FoundCall[] }> {
  const out = await run(['find', ...args, '--json'], env());
  expect(out.code, out.stderr).toBe(0);
  for (const value of [...PHONE_FORMS, ...NAMED_FORMS, ...customers]) {
    expect(out.stdout, value).not.toContain(value);
    expect(out.stderr, value).not.toContain(value);
  }
  return JSON.parse(out.stdout) as { asked: string; calls: FoundCall[] };
}

describe('callpipe find', () => {
  it('finds a number said in a call, in another notation, in exactly that call, with where', async () => {
    const found = await find('--phone', '０９０ (1234) 5678');
    expect(found.asked).toBe('[phone: 11 digits]');
    expect(found.calls.map((c) => c.callId)).toEqual([callIds[0]]);
    const doc = JSON.parse(await pc.store.getText(`${output.prefix}${callIds[0]}/result.json`)) as {
      utterances: { start: number; redactions?: { kind: string }[] }[];
    };
    const said = doc.utterances.findIndex((u) => (u.redactions ?? []).some((r) => r.kind === 'phone'));
    expect(said).toBeGreaterThanOrEqual(0);
    expect(found.calls[0]!.occurrences).toContainEqual({
      kind: 'phone',
      origin: 'speech',
      column: null,
      utterance: said,
      startSeconds: Math.round(doc.utterances[said]!.start * 1000) / 1000,
    });
  });

  it("finds the caller number of a recording's file name, in another notation, in exactly that call", async () => {
    expect(callIds[3]).not.toContain('08033334444');
    const found = await find('--phone', '+81 80-3333-4444');
    expect(found.calls).toEqual([
      {
        callId: callIds[3],
        occurrences: [{ kind: 'phone', origin: 'source', column: null, utterance: null, startSeconds: null }],
      },
    ]);
    // The name's date and time stamp is no number.
    expect((await find('--phone', '20261124-1015')).calls).toEqual([]);
  });

  it('finds the calls of a recording and of a prefix (--source), the number in the key never printed', async () => {
    const one = await find('--source', `s3://${pc.store.bucket}/${keys[3]}`);
    expect(one.calls.map((c) => c.callId)).toEqual([callIds[3]]);
    const all = await find('--source', `s3://${pc.store.bucket}/recordings/find-${id}/`);
    expect(all.calls.map((c) => c.callId).sort()).toEqual([...callIds].sort());
    expect(
      (await find('--source', `s3://${pc.store.bucket}/recordings/find-${id}/09000000000_x.wav`)).calls,
    ).toEqual([]);
  });

  it('finds a manifest customer id in exactly its call; an unknown one in none', async () => {
    const found = await find('--customer', customers[1]!.toLowerCase());
    expect(found.calls).toEqual([
      {
        callId: callIds[1],
        occurrences: [
          {
            kind: 'customer',
            origin: 'manifest',
            column: 'customer_id',
            utterance: null,
            startSeconds: null,
          },
        ],
      },
    ]);
    expect((await find('--customer', `CUST-${id}-9`)).calls).toEqual([]);
  });

  it('leaves neither the number nor the customer ids in plaintext in any stored object of the calls', async () => {
    const searched: string[] = [];
    for (const prefix of [output.prefix, tablesPrefix]) {
      let next: string | undefined;
      do {
        const page = await pc.store.listPage(prefix, next);
        for (const o of page.objects) {
          // The batch's working copy of the manifest (its pages) included: it holds no cell.
          const body = await pc.store.getBuffer(o.key);
          for (const value of [...PHONE_FORMS, ...customers])
            expect(body.includes(Buffer.from(value)), `${o.key}: ${value}`).toBe(false);
          searched.push(o.key);
        }
        next = page.next;
      } while (next);
    }
    expect(searched.some((k) => k.endsWith('/result.json'))).toBe(true);
    expect(searched.some((k) => /\/batches\/[^/]+\/parts\/[^/]+\/manifest\/page-/.test(k))).toBe(true);
    // The index is compacted with the other tables at the batch's end: parts, no call's own file.
    const index = searched.filter((k) => k.startsWith(`${tablesPrefix}personal_values/`));
    expect(index.length).toBeGreaterThan(0);
    for (const k of index) expect(k).toMatch(/\/personal_values\/dt=2026-03-01\/part-[^/]+\.parquet$/);
    // The masks are there instead of the values.
    const doc = JSON.parse(await pc.store.getText(`${output.prefix}${callIds[1]}/result.json`)) as {
      source: { metadata: Record<string, string> };
    };
    expect(doc.source.metadata.customer_id).toBe('[customer]');
  });
});
