/**
 * Text requests per audio hour by endpoint, from the emulator's request log (the evidence of what was
 * really sent, retries and refusals included), against the text-request budget of issues 15 and 16:
 * with redaction, dialog acts and sentiment on, at most 1,360 text requests per audio hour, where
 * sentiment alone (one request per utterance) cost 1,324.
 */
import { readFileSync } from 'node:fs';
import type { LogEntry } from '../../emulator/stats.ts';
import { roundThousandths } from '../../schemas/units.ts';

/** Text requests per audio hour of sentiment alone, per utterance, before dialog acts and redaction. */
const SENTIMENT_ALONE_PER_AUDIO_HOUR = 1324;
/** The budget: text requests per audio hour with every text step on. */
const TEXT_BUDGET_PER_AUDIO_HOUR = 1360;

/** Entries of the log from line `from` on (a pass's own, when `from` is the count before it). */
export function requestLogLines(path: string, from = 0): LogEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .slice(from)
    .map((l) => JSON.parse(l) as LogEntry);
}

export interface TextRequestFigures {
  /** Requests per audio hour by endpoint (`ne`, `sentiment`, `sentence_type`…). */
  byEndpoint: Record<string, number>;
  total: number;
  /** Of the total, requests refused (HTTP or envelope error: rate limit, faults) and sent again. */
  refused: number;
  budget: number;
  withinBudget: boolean;
  /** Sentiment alone, per utterance, as it was measured before dialog acts and redaction. */
  sentimentAloneBefore: number;
  /** What redaction's own requests add to that figure (share of it). */
  redactionShareOfBefore: number;
}

const round = (n: number) => Math.round(n);

/** Text requests (`…/nlp/v1/<endpoint>`, `…/nlp/beta/<endpoint>`) of `entries` per hour of `audioSeconds`. */
export function textRequestsPerAudioHour(
  entries: readonly LogEntry[],
  audioSeconds: number,
): TextRequestFigures {
  const hours = audioSeconds / 3600;
  const counts: Record<string, number> = {};
  let refused = 0;
  for (const e of entries) {
    const m = /\/nlp\/[^/]+\/([^/?]+)/.exec(e.endpoint);
    if (!m) continue;
    counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
    if (e.status !== 200 || (e.code !== undefined && e.code !== 0)) refused++;
  }
  const perHour = (n: number) => (hours > 0 ? n / hours : 0);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const byEndpoint = Object.fromEntries(
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, round(perHour(v))]),
  );
  return {
    byEndpoint,
    total: round(perHour(total)),
    refused: round(perHour(refused)),
    budget: TEXT_BUDGET_PER_AUDIO_HOUR,
    withinBudget: perHour(total) <= TEXT_BUDGET_PER_AUDIO_HOUR,
    sentimentAloneBefore: SENTIMENT_ALONE_PER_AUDIO_HOUR,
    redactionShareOfBefore: roundThousandths(perHour(counts['ne'] ?? 0) / SENTIMENT_ALONE_PER_AUDIO_HOUR),
  };
}
