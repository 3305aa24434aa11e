/**
 * One key scheme (schemas/call-keys.ts), proven over prefix spellings: the done-check (call-state),
 * the writer (results), the CLI's local copy (`process --out <dir>`) and the backfill's skip all find
 * a call's outputs at the same keys, however the output prefix was spelled. Before, `res2` made the
 * done-check look for `res2<callId>/result.json` while the writer wrote `res2/<callId>/result.json`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { createBackfillActivities } from '../../activities/backfill/backfill-activities.ts';
import { createCallStateActivities } from '../../activities/storage/call-state-activities.ts';
import { createResultActivities } from '../../activities/storage/result-activities.ts';
import { copyResults } from '../../cli/commands/process.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { callIdOf, workflowIdOf } from '../../activities/storage/call-id.ts';
import {
  callKeys,
  callOutputKeys,
  KeyError,
  normalizePrefix,
  outputLocationOf,
  sessionCheckpointKey,
  sessionResultKey,
  type OutputLocation,
} from '../../schemas/call-keys.ts';
import { MemoryStore } from './nlp.helpers.ts';

const BUCKET = 'callpipe';
const SOURCE = { bucket: BUCKET, key: 'input/2026/11/23/call-0001.wav', etag: 'e1', size: 10 };

/** Hand-picked spellings, then random ones built from segments, slashes and an `s3://` scheme. */
function spellings(): string[] {
  const fixed = ['', '/', 'res2', 'res2/', 'res2//', 'a/b', 'a/b/', 'a//b', 'a//b//', 's3://callpipe/res2'];
  fixed.push('s3://callpipe/res2/', 's3://callpipe', 's3://callpipe/', 's3://other/nightly/2026/');
  const random = seededRandom(12);
  const parts = ['results', 'res2', 'nightly', '2026', 'x.y', 'a-b_c'];
  for (let i = 0; i < 40; i++) {
    const n = Math.floor(random() * 4);
    let p = '';
    for (let j = 0; j < n; j++)
      p += `${parts[Math.floor(random() * parts.length)]}${'/'.repeat(1 + Math.floor(random() * 2))}`;
    if (random() < 0.5) p = p.replace(/\/+$/, '');
    fixed.push(random() < 0.3 ? `s3://${BUCKET}/${p}` : p);
  }
  return fixed.filter((s) => s !== '/');
}

describe('call keys: staging and prefixes', () => {
  it("put a session's recognition checkpoints in its call's staging folder, for every staging spelling", () => {
    const callId = callIdOf(SOURCE);
    for (const spelling of [
      '',
      'staging',
      'staging/',
      'a/b//',
      ...spellings().filter((x) => !x.includes(':')),
    ]) {
      const { staging } = callKeys({
        output: { bucket: BUCKET, prefix: '' },
        stagingPrefix: spelling,
        callId,
        workflowId: workflowIdOf(SOURCE),
      });
      // Under the call's staging folder: deleting it, or forgetting the call, removes them.
      expect(sessionCheckpointKey(sessionResultKey(staging, 3), 'writer'), spelling).toBe(
        `${staging.dir}checkpoints/writer.json`,
      );
    }
  });

  it('normalize a prefix to empty or exactly one trailing slash, idempotently', () => {
    for (const s of spellings()) {
      const { prefix } = outputLocationOf(s, BUCKET);
      expect(prefix === '' || (prefix.endsWith('/') && !prefix.startsWith('/')), s).toBe(true);
      expect(prefix).not.toContain('//');
      expect(normalizePrefix(prefix)).toBe(prefix);
    }
    expect(() => normalizePrefix('/abs')).toThrow(KeyError);
  });
});

describe('call keys: agreement and containment', () => {
  it('agree between the writer, the done-check, the CLI copy and the backfill skip, for every spelling', async () => {
    const callId = callIdOf(SOURCE);
    for (const spelling of spellings()) {
      const store = new MemoryStore(BUCKET);
      const location: OutputLocation = outputLocationOf(spelling, BUCKET);
      // The workflow builds its keys from the location as the CLI passes it, or as an older client
      // spelled it: the same keys either way.
      const raw = spelling.startsWith('s3://') ? location : { bucket: BUCKET, prefix: spelling };
      const keys = callKeys({
        output: raw,
        stagingPrefix: 'staging',
        callId,
        workflowId: workflowIdOf(SOURCE),
      });
      expect(keys.output, spelling).toEqual(callOutputKeys(location, callId));

      // The writer.
      const { writeError } = createResultActivities({ store });
      await writeError({ callId, output: keys.output, source: SOURCE, stage: 'probe', reason: 'x' });
      const out = store.withBucket(location.bucket);
      expect(out.objects.has(keys.output.error), spelling).toBe(true);
      await out.put(keys.output.result, '{}'); // what publishResult writes last, at the same key

      // The done-check.
      const { resultExists } = createCallStateActivities({ store });
      expect(await resultExists({ bucket: keys.output.bucket, key: keys.output.result }), spelling).toBe(
        true,
      );

      // The CLI's copy of `--out <dir>`.
      const dir = tempDir('callpipe-keys-');
      await copyResults(store, location, [{ callId }], dir);
      expect(readdirSync(join(dir, callId)).sort(), spelling).toEqual(['error.json', 'result.json']);

      // The backfill's skip.
      store.withBucket(SOURCE.bucket).objects.set(SOURCE.key, 'audio');
      const { listBackfillPage } = createBackfillActivities({ store });
      const page = await listBackfillPage({
        source: { kind: 'prefix', bucket: SOURCE.bucket, prefix: 'input/' },
        output: location,
        filters: {},
        cursor: { page: 0, finished: false },
        pageSize: 100,
        redo: false,
        partsPrefix: 'parts/',
      });
      expect(page.items, spelling).toEqual([]);
      expect(page.skipped, spelling).toBe(1);
    }
  });

  it('keep a call inside its prefix and a run inside its call', () => {
    const keys = callKeys({
      output: { bucket: BUCKET, prefix: 'results' },
      stagingPrefix: 'staging//',
      callId: 'call-1',
      workflowId: 'call-call-1-abc/../x',
    });
    expect(keys.output.result).toBe('results/call-1/result.json');
    expect(keys.staging.dir).toBe('staging/calls/call-1/call-call-1-abc_.._x/');
    expect(keys.staging.timeline.startsWith(keys.staging.dir)).toBe(true);
    expect(() =>
      callKeys({
        ...{ output: { bucket: BUCKET, prefix: 'r' } },
        stagingPrefix: '',
        callId: '../x',
        workflowId: 'w',
      }),
    ).toThrow(KeyError);
  });
});
