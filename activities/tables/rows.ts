/**
 * A call's rows in the analysis tables (schemas/tables.ts), from its result.json: pure, so a re-run,
 * a rebuild from stored results and a test all get the same rows from the same document.
 */
import type { ResultDocument, SentimentAggregate } from '../../schemas/result.ts';
import { dayIn, TABLES_SCHEMA_VERSION, type TableName, type TableRow } from '../../schemas/tables.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';
import type { CallIdMode } from '../../schemas/config.ts';
import { reportedSource } from '../storage/call-id.ts';

/** When the call started, and where that came from (the `call_started_at_source` column). */
export interface CallStart {
  at: Date;
  source: 'manifest' | 'recording' | 'processing';
  /** The call's day (its partition) in the tables' time zone. */
  dt: string;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The call's start: the manifest's `started_at` (a date alone is that day, whatever the time zone),
 * else the recording object's time, else when processing began.
 */
export function callStart(result: ResultDocument, timeZone: string): CallStart {
  const manifest = result.source.metadata?.started_at?.trim();
  if (manifest) {
    if (DATE_ONLY.test(manifest)) {
      const at = new Date(`${manifest}T00:00:00Z`);
      if (!Number.isNaN(at.getTime())) return { at, source: 'manifest', dt: manifest };
    }
    const at = new Date(manifest);
    if (!Number.isNaN(at.getTime())) return { at, source: 'manifest', dt: dayIn(at, timeZone) };
  }
  if (result.source.lastModified) {
    const at = new Date(result.source.lastModified);
    return { at, source: 'recording', dt: dayIn(at, timeZone) };
  }
  const at = new Date(result.processing.startedAt);
  return { at, source: 'processing', dt: dayIn(at, timeZone) };
}

function speakerSentiment(result: ResultDocument, speaker: string): SentimentAggregate | undefined {
  return result.sentiment?.bySpeaker[speaker];
}

export interface CallRows {
  start: CallStart;
  processedAt: Date;
  rows: Record<TableName, TableRow[]>;
}

/**
 * The recording's `s3://bucket/key` and key as the tables show them: a caller number or an e-mail address
 * in the key masked as batch reports mask it (call-id.ts, by the deployment's call id rule), since the
 * tables are read by everyone who analyses calls. The key itself stays in result.json.
 */
export function shownSource(
  source: ResultDocument['source'],
  callIds: CallIdMode,
): { uri: string; key: string } {
  const bucket = `s3://${source.bucket}/`;
  return {
    uri: reportedSource(source.uri, callIds),
    key: reportedSource(`${bucket}${source.key}`, callIds).slice(bucket.length),
  };
}

/** The call's reason and transcript quality columns (null when the call has neither). */
function reasonAndQuality(result: ResultDocument) {
  const best = result.reasons?.top[0];
  const quality = result.transcriptQuality;
  return {
    reason: best?.class ?? null,
    reason_score: best?.score ?? null,
    transcript_quality: quality?.score ?? null,
    transcript_level: quality?.level ?? null,
    needs_review: quality?.needsReview ?? null,
  };
}

/** The calls row's columns of how the call was processed (result.json `processing`, `recognition`). */
function processingColumns(result: ResultDocument): TableRow {
  return {
    batch_id: result.processing.batchId ?? null,
    workflow_id: result.processing.workflowId,
    retries: result.processing.retries,
    restarts: result.processing.restarts,
    recognition: result.recognition?.used ?? null,
    wall_seconds: result.processing.wallSeconds.total ?? 0,
  };
}

/** The call's row in `calls` and its rows in `utterances`. */
export function callRows(
  result: ResultDocument,
  resultKey: string,
  timeZone: string,
  callIds: CallIdMode = 'auto',
): CallRows {
  const start = callStart(result, timeZone);
  const common = { processed_at: new Date(result.writtenAt), schema_version: TABLES_SCHEMA_VERSION };
  const talk = new Map(result.talk.bySpeaker.map((t) => [t.speaker, t]));
  const metadata = result.source.metadata ?? {};
  const requests = result.processing.totalRequests;
  const source = shownSource(result.source, callIds);
  const call: TableRow = {
    call_id: result.callId,
    status: result.stepFailures.length > 0 ? 'partial' : 'done',
    call_started_at: start.at,
    call_started_at_source: start.source,
    duration_seconds: result.audio.durationSeconds,
    speakers: result.speakers,
    speakers_inferred: result.speakerRoles?.inferred ?? null,
    roles_decision: result.speakerRoles?.decision ?? null,
    utterance_count: result.utterances.length,
    speaker_stats: result.speakers.map((speaker) => {
      const t = talk.get(speaker);
      const s = speakerSentiment(result, speaker);
      return {
        speaker,
        utterances: t?.utterances ?? 0,
        talk_seconds: t?.talkSeconds ?? 0,
        silence_seconds: t?.silenceSeconds ?? result.audio.durationSeconds,
        talk_share: t?.talkShare ?? 0,
        sentiment_label: s?.label ?? null,
        sentiment_mean: s?.meanValue ?? null,
      };
    }),
    agent_talk_seconds: talk.get('agent')?.talkSeconds ?? null,
    customer_talk_seconds: talk.get('customer')?.talkSeconds ?? null,
    silence_seconds: result.talk.silenceSeconds,
    overlap_seconds: result.talk.overlapSeconds,
    sentiment_label: result.sentiment?.overall.label ?? null,
    sentiment_mean: result.sentiment?.overall.meanValue ?? null,
    agent_sentiment_label: speakerSentiment(result, 'agent')?.label ?? null,
    customer_sentiment_label: speakerSentiment(result, 'customer')?.label ?? null,
    agent_sentiment_mean: speakerSentiment(result, 'agent')?.meanValue ?? null,
    customer_sentiment_mean: speakerSentiment(result, 'customer')?.meanValue ?? null,
    summary: result.summary?.text ?? null,
    ...reasonAndQuality(result),
    categories: result.categories ? result.categories.filter((c) => c.matched).map((c) => c.name) : null,
    scorecard: result.scorecard?.name ?? null,
    score: result.scorecard?.score ?? null,
    score_max: result.scorecard?.max ?? null,
    score_normalized: result.scorecard?.normalized ?? null,
    hold_seconds: result.metrics?.holdSeconds ?? null,
    rules_version: result.rules?.version ?? null,
    keywords: result.keywords?.map((k) => k.text) ?? null,
    redactions_total: result.redaction?.total ?? null,
    redaction_counts: result.redaction?.counts ?? null,
    failed_steps: result.stepFailures.map((f) => f.step),
    agent: metadata.agent ?? null,
    direction: metadata.direction ?? null,
    metadata,
    source_uri: source.uri,
    source_key: source.key,
    audio_codec: result.audio.codec,
    audio_channels: result.audio.channels,
    audio_sample_rate: result.audio.sampleRate,
    ...processingColumns(result),
    requests,
    result_key: resultKey,
    result_schema_version: result.schemaVersion,
    ...common,
  };
  const utterances: TableRow[] = result.utterances.map((u, i) => ({
    call_id: result.callId,
    utterance_index: i,
    speaker: u.speaker,
    speaker_confidence: u.speakerConfidence ?? null,
    start_seconds: roundSecondsToMs(u.start),
    end_seconds: roundSecondsToMs(u.end),
    text: u.text,
    cleaned_text: u.cleanedText,
    confidence: u.confidence ?? null,
    sentiment_label: u.sentiment?.label ?? null,
    sentiment_value: u.sentiment?.value ?? null,
    emotions: u.sentiment ? [...new Set(u.sentiment.emotions.flatMap((e) => e.labels))] : null,
    filler_count: u.fillers.length,
    redaction_kinds: u.redactions ? [...new Set(u.redactions.map((r) => r.kind))] : null,
    session: u.session,
    ...common,
  }));
  return {
    start,
    processedAt: common.processed_at,
    rows: { calls: [call], utterances, personal_values: personalValueRows(result, common) },
  };
}

/**
 * The call's `personal_values` rows: each digest its redaction records carry (once per utterance and
 * value), then each personal manifest column's and each of the recording's key (origin `source`). A
 * result without digests (no key configured) has none.
 */
function personalValueRows(result: ResultDocument, common: TableRow): TableRow[] {
  const rows: TableRow[] = [];
  result.utterances.forEach((u, i) => {
    const seen = new Set<string>();
    for (const r of u.redactions ?? []) {
      if (!r.digest || seen.has(r.digest)) continue;
      seen.add(r.digest);
      rows.push({
        call_id: result.callId,
        kind: r.kind,
        digest: r.digest,
        origin: 'speech',
        column: null,
        utterance_index: i,
        start_seconds: roundSecondsToMs(u.start),
        ...common,
      });
    }
  });
  for (const p of result.source.personalValues ?? []) {
    rows.push({
      call_id: result.callId,
      kind: p.kind,
      digest: p.digest,
      origin: p.origin ?? 'manifest',
      column: p.column ?? null,
      utterance_index: null,
      start_seconds: null,
      ...common,
    });
  }
  return rows;
}
