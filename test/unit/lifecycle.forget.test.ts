/**
 * forget's and retention's pure parts and its object step on an in-memory store: the retention syntax
 * checked at load, the cutoff day, whole-id matching in reports, keys named without personal data, the
 * order of deletes (the recording first, result.json last), and a refused delete failing with the key.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from './nlp.helpers.ts';
import { DeleteRefusedError } from '../../activities/storage/object-store.ts';
import {
  createLifecycleActivities,
  mentions,
  namedKey,
} from '../../activities/lifecycle/lifecycle-activities.ts';
import { callHoldings } from '../../activities/lifecycle/call-objects.ts';
import { eventKey, failureKey } from '../../activities/events/event-store.ts';
import { forgetRequestId } from '../../cli/commands/forget.ts';
import { parseRetentionDays, retentionCutoff, type ForgetInput } from '../../schemas/lifecycle.ts';
import { loadConfig } from '../../schemas/config-loader.ts';

const places: ForgetInput['places'] = {
  output: { bucket: 'out', prefix: 'results/' },
  stagingPrefix: 'staging/',
  unredacted: { bucket: 'plain', prefix: 'unredacted/' },
  tables: { bucket: 'out', prefix: 'tables/', timeZone: 'UTC' },
};
const CALL = 'call-x-abcdefabcdefabcd';
const OTHER = 'call-y-abcdefabcdefabcd';

function deployment() {
  const staging = new MemoryStore('staging');
  const out = staging.withBucket('out');
  const plain = staging.withBucket('plain');
  const rec = staging.withBucket('recs');
  for (const id of [CALL, OTHER]) {
    const source = { bucket: 'recs', key: `in/${id === CALL ? '09012345678' : 'other'}_20261124.wav` };
    void out.put(`results/${id}/result.json`, JSON.stringify({ callId: id, source }));
    void out.put(`results/${id}/transcript.vtt`, 'WEBVTT');
    void out.put(`results/${id}/call.html`, '<html>');
    void out.put(`results/${id}/audio.redacted.flac`, 'flac');
    void plain.put(`unredacted/${id}/result.json`, '{}');
    void staging.put(`staging/calls/${id}/wf/timeline.json`, '{}');
    void rec.put(source.key, 'wav');
    // The call's events on two days, and a delivery of one given up.
    const done = eventKey(places.output, '2026-11-24T10:00:00.000Z', 'evt_done', id);
    void out.put(done, '{}');
    void out.put(eventKey(places.output, '2026-11-25T10:00:00.000Z', 'evt_alert', id), '{}');
    void out.put(failureKey(done, '2026-11-25T11:00:00.000Z', 'evt_done', 'webhook:0'), '{}');
  }
  // A batch's event: no call's.
  void out.put(eventKey(places.output, '2026-11-24T11:00:00.000Z', 'evt_batch'), '{}');
  return { staging, out, plain, rec };
}

describe('CALLPIPE_RETENTION_DAYS', () => {
  it('takes a number for every kind but recordings, or kind=days pairs', () => {
    expect(parseRetentionDays('90')).toEqual({
      results: 90,
      unredacted: 90,
      'redacted-audio': 90,
      staging: 90,
    });
    expect(parseRetentionDays('results=365, staging=7,recordings=365')).toEqual({
      results: 365,
      staging: 7,
      recordings: 365,
    });
  });

  it('refuses what could erase by mistake, with the reason', () => {
    expect(parseRetentionDays('0')).toMatch(/at least 1/);
    expect(parseRetentionDays('results=0')).toMatch(/at least 1 day/);
    expect(parseRetentionDays('result=30')).toMatch(/unknown retention kind 'result'/);
    expect(parseRetentionDays('results=30,results=40')).toMatch(/given twice/);
    expect(parseRetentionDays('30d')).toMatch(/not kind=days/);
    expect(parseRetentionDays('results=30,recordings=60')).toMatch(/must not outlast results/);
    expect(() => loadConfig({ env: { CALLPIPE_RETENTION_DAYS: 'staging=-1' } })).toThrow(
      /CALLPIPE_RETENTION_DAYS/,
    );
    expect(loadConfig({ env: { CALLPIPE_RETENTION_DAYS: 'staging=3' } }).retentionDays).toEqual({
      staging: 3,
    });
    expect(loadConfig({ env: {} }).retentionDays).toBeUndefined();
    expect(loadConfig({ env: { CALLPIPE_RETENTION_DAYS: '30' } }).retentionDays).toEqual({
      results: 30,
      unredacted: 30,
      'redacted-audio': 30,
      staging: 30,
    });
  });

  it('counts days back from now: calls of days before the cutoff are older', () => {
    expect(retentionCutoff(new Date('2026-06-30T12:00:00Z'), 30)).toBe('2026-05-31');
    expect(retentionCutoff(new Date('2026-03-01T00:00:00Z'), 1)).toBe('2026-02-28');
  });
});

describe('forget: ids and listing', () => {
  it('matches whole call ids only, and names keys without the digits of a caller number', () => {
    expect(mentions(`"callId":"${CALL}"`, CALL)).toBe(true);
    expect(mentions(`../${CALL}/call.html`, CALL)).toBe(true);
    expect(mentions(`x${CALL}`, CALL)).toBe(false);
    expect(mentions(`${CALL}-2`, CALL)).toBe(false);
    expect(namedKey('recs', 'in/09012345678_x.wav')).not.toContain('09012345678');
    expect(namedKey('out', `results/${CALL}/result.json`)).toBe(`s3://out/results/${CALL}/result.json`);
  });

  it('derives the request id from the request, in letters only', () => {
    const a = forgetRequestId([CALL, OTHER], false, 's3://out/results/');
    expect(a).toMatch(/^forget-[a-p]{20}$/);
    expect(forgetRequestId([OTHER, CALL, CALL], false, 's3://out/results/')).toBe(a);
    expect(forgetRequestId([CALL, OTHER], true, 's3://out/results/')).not.toBe(a);
  });

  it("lists a call's objects by kind, and the recording only when asked", async () => {
    const { staging } = deployment();
    const [held] = await callHoldings(staging, places, [CALL]);
    expect(held!.objects.map((o) => o.kind).sort()).toEqual([
      'events',
      'events',
      'events',
      'redacted-audio',
      'results',
      'results',
      'results',
      'staging',
      'unredacted',
    ]);
    expect(held!.objects.filter((o) => o.kind === 'events').map((o) => o.key)).toEqual([
      `results/events/2026-11-24/${CALL}/evt_done.ndjson`,
      `results/events/2026-11-25/${CALL}/evt_alert.ndjson`,
      `results/events/failed/2026-11-25/${CALL}/evt_done.webhook-0.json`,
    ]);
    expect(held!.recording).toEqual({ bucket: 'recs', key: 'in/09012345678_20261124.wav' });
    const [withRecording] = await callHoldings(staging, places, [CALL], { recordings: true });
    expect(withRecording!.objects.filter((o) => o.kind === 'recording')).toHaveLength(1);
  });
});

describe('forget: deleting', () => {
  it("deletes the call's objects, the recording first and result.json last, and no other call's", async () => {
    const { staging, out, plain, rec } = deployment();
    const deletes: string[] = [];
    for (const s of [staging, out, plain, rec]) {
      const del = s.deleteKeys.bind(s);
      s.deleteKeys = (keys) => {
        deletes.push(...keys.map((k) => `${s.bucket}/${k}`));
        return del(keys);
      };
    }
    const counts = await createLifecycleActivities({ store: staging }).forgetObjects({
      callIds: [CALL],
      places,
      recordings: true,
    });
    expect(counts[CALL]).toEqual({
      results: 3,
      'redacted-audio': 1,
      unredacted: 1,
      staging: 1,
      events: 3,
      recording: 1,
    });
    expect(deletes[0]).toBe('recs/in/09012345678_20261124.wav');
    expect(deletes.at(-1)).toBe(`out/results/${CALL}/result.json`);
    expect([...out.objects.keys()].filter((k) => k.includes(CALL))).toEqual([]);
    expect([...out.objects.keys()].filter((k) => k.includes(OTHER))).toHaveLength(7);
    expect(out.objects.has('results/events/2026-11-24/evt_batch.ndjson')).toBe(true);
    expect(rec.objects.size).toBe(1);
    // A repeat finds nothing and deletes nothing.
    const again = await createLifecycleActivities({ store: staging }).forgetObjects({
      callIds: [CALL],
      places,
      recordings: true,
    });
    expect(again[CALL]).toEqual({});
  });

  it('fails with the refused key named when S3 refuses a delete, and keeps result.json', async () => {
    const { staging, out } = deployment();
    out.deleteKeys = (keys) => {
      const refused = keys.filter((k) => k.endsWith('call.html'));
      if (refused.length)
        return Promise.reject(
          new DeleteRefusedError(
            refused.map((Key) => ({ Key, Code: 'AccessDenied' })),
            keys.length,
          ),
        );
      return MemoryStore.prototype.deleteKeys.call(out, keys);
    };
    const err = await createLifecycleActivities({ store: staging })
      .forgetObjects({ callIds: [CALL], places, recordings: false })
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('StorageRefused');
    expect((err as Error).message).toBe(
      `S3 refused to delete s3://out/results/${CALL}/call.html (AccessDenied)`,
    );
    expect(out.objects.has(`results/${CALL}/result.json`)).toBe(true);
  });
});
