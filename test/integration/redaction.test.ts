/**
 * Personal data end to end (issue 15, "Done when"), on the stack's own workers with default settings:
 * a generated call in which a customer gives a name, a birth date, mobile numbers (in digits, and in
 * kanji read in two goes), a landline in katakana, a card number, a My Number, a postal code and street
 * address, an e-mail address and a bank account leaves none of them in the bucket (inputs aside), the
 * stack's logs or Temporal's database (its SQLite files, and the history as the server gives it), while
 * every utterance is still there and the ordinary lines are word for word. The same search finds every
 * value in the unredacted copy a second run writes under a prefix of its own: it can fail. With audio
 * redaction on, the redacted copy of the recording is decoded back: the tone over every utterance that
 * held personal data, on both channels, and the recording's own samples (its DTMF "speech") everywhere
 * else; and a copy whose spans do not fit the audio is not written at all, with the reason.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording } from '../../cli/submit.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { stackConfig } from '../helpers/stack.ts';
import { decryptPayloads, recordHistory } from '../helpers/histories.ts';
import { writeFileSync } from 'node:fs';
import { createRecordingMediaActivities } from '../../activities/media/recording-media-activities.ts';
import { S3StagingStore } from '../../activities/storage/staging-s3.ts';
import { REDACTED_AUDIO_PAD_SECONDS, REDACTED_AUDIO_TONE_HZ } from '../../schemas/limits.ts';
import type { RedactionOutput } from '../../schemas/result.ts';
import { decodeDtmfPhrases } from '../helpers/dtmf-decode.ts';
import { channelSlice, decodeInterleaved, toneShare } from '../helpers/redacted-audio.ts';
import { saysRedacted } from '../helpers/pipeline.ts';
import {
  ORDINARY_IDS,
  PERSONAL_VALUES_SAID as SAID,
  personalDataCall,
  personalDataIn as found,
} from '../helpers/personal-data.ts';
import { runId } from '../helpers/run-id.ts';

/** JSON of anything, with byte fields (payloads) decoded as UTF-8 so their text can be searched. */
function searchable(value: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(value, (_k, v: unknown) =>
      v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : typeof v === 'bigint' ? String(v) : v,
    ),
  );
}

let dir: string;
let pc: PipelineClient;
let path: string;
let ids: number[];
const run = runId();
const output = () => ({ bucket: pc.store.bucket, prefix: `redaction-${run}/default/` });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-redaction-'));
  pc = await connectPipeline(stackConfig());
  const call = personalDataCall();
  ids = call.ids;
  path = join(dir, 'pii-call.wav');
  await renderFixture(call.script, path);
});

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function process(extra: Parameters<typeof submitRecording>[2]['extra'], prefix: string) {
  const source = await resolveSource(path, pc.store, pc.config);
  const submitted = await submitRecording(pc, source, {
    output: { bucket: pc.store.bucket, prefix },
    redo: true,
    ...(extra ? { extra } : {}),
  });
  const result = await submitted.handle.result();
  expect(result.status, result.reason).toBe('done');
  return { submitted, result };
}

/** Every object of the bucket but the inputs: key → body. */
async function bucketObjects(skip: (key: string) => boolean): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
  let next: string | undefined;
  do {
    const page = await pc.store.listPage('', next);
    for (const o of page.objects) {
      if (o.key.startsWith(pc.config.s3.inputPrefix) || skip(o.key)) continue;
      bodies.set(o.key, await pc.store.getBuffer(o.key));
    }
    next = page.next;
  } while (next);
  return bodies;
}

describe('personal data: redacted by default, everywhere: values everywhere', () => {
  it('leaves no value in the bucket, the logs or Temporal’s database; every utterance is there', async () => {
    const { submitted, result } = await process(undefined, output().prefix);
    const doc: ResultDocument = resultDocumentSchema.parse(
      JSON.parse(await pc.store.getText(result.resultKey!)),
    );

    // Every utterance, in order; the ordinary ones word for word, the others masked where values were.
    const book = loadPhrasebook();
    expect(doc.utterances).toHaveLength(ids.length);
    doc.utterances.forEach((u, i) => {
      const said = book.get(ids[i]!)!;
      if (ORDINARY_IDS.includes(ids[i]!)) expect(u.text, said).toBe(said);
      else expect(saysRedacted(u.text, said), `${u.text} for ${said}`).toBe(true);
    });
    const masked = doc.utterances.filter((u) => (u.redactions ?? []).length > 0);
    expect(masked.length).toBeGreaterThanOrEqual(11);
    expect(doc.redaction).toMatchObject({ applied: true, unredactedCopy: false, audio: { status: 'off' } });
    for (const kind of [
      'name',
      'birthDate',
      'phone',
      'cardNumber',
      'myNumber',
      'postalCode',
      'address',
      'email',
      'bankAccount',
    ]) {
      expect(doc.redaction!.counts[kind], kind).toBeGreaterThanOrEqual(1);
    }
    expect(doc.processing.requests.redaction!.requests).toBeGreaterThanOrEqual(1);

    // The bucket (staging was cleaned up: no intermediate holds them either).
    const objects = await bucketObjects(() => false);
    expect(objects.has(result.resultKey!)).toBe(true);
    expect(
      [...objects.keys()].some((k) => k.includes(`/${submitted.callId}/`) && k.includes('staging')),
    ).toBe(false);
    for (const [key, body] of objects) expect(found(body), key).toEqual([]);

    // The stack's logs.
    const logs = join(inject('stack').home, 'logs');
    for (const file of readdirSync(logs)) {
      expect(found(readFileSync(join(logs, file))), file).toEqual([]);
    }

    // Metrics: counts by kind, never a value.
    const metrics = await (await fetch(inject('stack').metricsUrl!)).text();
    expect(metrics).toMatch(/^callpipe_redactions_total\{kind="phone"\} [1-9]/m);
    expect(metrics).toMatch(
      /callpipe_service_requests_total\{endpoint="nlp\/redaction",outcome="ok"\} [1-9]/,
    );
    expect(found(metrics)).toEqual([]);

    // Temporal: the history as the server gives it, and its database files (with the write-ahead log);
    // the history also as an operator reads it through the codec server, its payloads decrypted.
    const raw = await pc.client.workflow.getHandle(submitted.workflowId).fetchHistory();
    for (const history of [searchable(raw), searchable(decryptPayloads(raw, pc.config.temporal))]) {
      expect(found(history, [submitted.callId])).toEqual([submitted.callId]);
      expect(found(history)).toEqual([]);
    }
    const db = join(inject('stack').home, 'temporal.sqlite');
    const files = [db, `${db}-wal`, `${db}-shm`].filter((f) => existsSync(f));
    const bytes = Buffer.concat(files.map((f) => readFileSync(f)));
    // The database holds the run's payloads (its call id), but none of the values.
    expect(found(bytes, [submitted.callId])).toEqual([submitted.callId]);
    expect(found(bytes)).toEqual([]);
  });

  it('an unredacted copy, when configured, holds every value under its own prefix, and only there', async () => {
    const plain = { bucket: pc.store.bucket, prefix: `redaction-${run}/unredacted/` };
    const results = `redaction-${run}/with-copy/`;
    const { result } = await process({ redaction: { unredacted: plain } }, results);
    const copyKey = `${plain.prefix}${result.callId}/result.json`;
    const copy = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(copyKey)));
    expect(copy.redaction).toMatchObject({ applied: false });
    const inCopy = Buffer.from(await pc.store.getText(copyKey));
    // As recognized: Japanese models write no spaces between words (`delimiter` false).
    const recognized = SAID.map((v) => v.replace(/ /g, ''));
    expect(found(inCopy, recognized)).toEqual(recognized);
    expect(
      found(Buffer.from(await pc.store.getText(`${plain.prefix}${result.callId}/transcript.vtt`)), [
        '鈴木花子',
      ]),
    ).toEqual(['鈴木花子']);
    // Nowhere else in the bucket.
    const objects = await bucketObjects((key) => key.startsWith(plain.prefix));
    for (const [key, body] of objects) expect(found(body), key).toEqual([]);
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(result.resultKey!)));
    expect(doc.redaction).toMatchObject({ applied: true, unredactedCopy: true });
  });
});

describe('personal data: redacted by default, everywhere: audio redaction', () => {
  it('audio redaction on: the tone over every redacted utterance on both channels, the recording elsewhere', async () => {
    const { result, submitted } = await process(
      { redaction: { audio: { mask: 'tone' } } },
      `redaction-${run}/audio/`,
    );
    recordHistory(pc, submitted.workflowId, 'process-recording-redacted-audio.json');
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(result.resultKey!)));
    const audio = doc.redaction!.audio;
    expect(audio).toMatchObject({
      status: 'written',
      mask: 'tone',
      key: `redaction-${run}/audio/${result.callId}/audio.redacted.flac`,
    });
    if (audio.status !== 'written') return;
    expect(doc.stepFailures).toEqual([]);
    // The call page plays the redacted copy, not the recording.
    const page = await pc.store.getText(result.resultKey!.replace(/result\.json$/, 'call.html'));
    expect(page).toMatch(/data-src="[^"]*\/audio\.redacted\.flac"/);

    const flac = join(dir, 'redacted.flac');
    writeFileSync(flac, await pc.store.getBuffer(audio.key));
    const [copy, source] = await Promise.all([decodeInterleaved(flac), decodeInterleaved(path)]);
    const { sampleRate: rate, channels } = doc.audio;
    expect(channels).toBe(2);
    expect(copy.length).toBe(source.length);

    const masked = doc.utterances.filter((u) => (u.redactions ?? []).length > 0);
    expect(masked.length).toBeGreaterThanOrEqual(11);
    const spans = masked.map((u) => [
      Math.max(0, Math.floor((u.start - REDACTED_AUDIO_PAD_SECONDS) * rate)),
      Math.ceil((u.end + REDACTED_AUDIO_PAD_SECONDS) * rate),
    ]);
    expect(audio.spans).toBeGreaterThanOrEqual(1);
    expect(audio.spans).toBeLessThanOrEqual(masked.length);
    // Over every redacted utterance, on both channels: the tone, and no phrase left to decode.
    for (const u of masked) {
      for (let ch = 0; ch < channels; ch++) {
        const over = channelSlice(copy, channels, ch, Math.floor(u.start * rate), Math.ceil(u.end * rate));
        const { share } = toneShare(over, rate, REDACTED_AUDIO_TONE_HZ);
        expect(share, `utterance ${u.index} channel ${ch}`).toBeGreaterThan(0.9);
        const pcm = Int16Array.from(over, (v) => Math.round(v * 32768));
        expect(decodeDtmfPhrases(pcm, rate), `utterance ${u.index}`).toEqual([]);
      }
    }
    // Everywhere else, the recording's own samples; the ordinary lines still say what they said.
    let outside = 0;
    let changed = 0;
    for (let frame = 0; frame < copy.length / channels; frame++) {
      if (spans.some(([from, to]) => frame >= from! && frame < to!)) continue;
      for (let ch = 0; ch < channels; ch++) {
        outside += 1;
        if (copy[frame * channels + ch] !== source[frame * channels + ch]) changed += 1;
      }
    }
    expect(outside).toBeGreaterThan(copy.length / 3);
    expect(changed).toBe(0);
    const book = loadPhrasebook();
    doc.utterances.forEach((u, i) => {
      if (!ORDINARY_IDS.includes(ids[i]!)) return;
      const said = channelSlice(
        copy,
        channels,
        u.track,
        Math.floor((u.start - 0.05) * rate),
        Math.ceil((u.end + 0.05) * rate),
      );
      const heard = decodeDtmfPhrases(
        Int16Array.from(said, (v) => Math.round(v * 32768)),
        rate,
      ).map((p) => p.id);
      expect(heard, book.get(ids[i]!)).toContain(ids[i]);
    });
  });
});

describe('personal data: redacted by default, everywhere: a span beyond the audio', () => {
  it('a span beyond the audio: no redacted copy (not even an earlier one), and the reason', async () => {
    const source = await resolveSource(path, pc.store, pc.config);
    const media = createRecordingMediaActivities({
      store: pc.store,
      staging: new S3StagingStore(pc.store),
    });
    const probe = await media.probeSource({ source });
    const staged = `${pc.config.s3.stagingPrefix}redaction-${run}/redaction.json`;
    const record = (index: number, start: number, end: number) => ({
      index,
      track: 1,
      speaker: 'customer',
      start,
      end,
      redactions: [
        { kind: 'phone', begin: 0, end: 6, source: 'pattern' as const, originalBegin: 0, originalEnd: 11 },
      ],
    });
    const records: RedactionOutput = {
      step: 'redaction',
      callId: 'beyond',
      timelineKey: `${staged}.timeline.json`,
      utterances: [record(3, 5, 7), record(9, probe.durationSeconds + 3, probe.durationSeconds + 5)],
      counts: { phone: 2 },
      windows: 1,
      detectors: ['ne', 'pattern'],
      cost: { requests: 1, retries: 0, bytesSent: 0, bytesReceived: 0 },
    };
    await pc.store.put(staged, JSON.stringify(records), { contentType: 'application/json' });
    const key = `redaction-${run}/beyond/beyond/audio.redacted.flac`;
    await pc.store.put(key, Buffer.from('a copy an earlier run left'), { contentType: 'audio/flac' });

    const out = await media.redactAudio({
      source,
      probe,
      redactionKey: staged,
      output: { bucket: pc.store.bucket, key },
      mask: 'tone',
    });
    expect(out).toEqual({
      status: 'failed',
      reason: expect.stringMatching(
        /^redacted span 2 \([0-9.]+ s–[0-9.]+ s\) lies beyond the audio \([0-9.]+ s\)/,
      ),
    });
    expect(await pc.store.exists(key)).toBe(false);
  });
});
