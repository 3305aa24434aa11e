/**
 * Redaction of a whole call, without the service: the local detectors (numbers, birth dates, e-mail
 * addresses, address numbers, the deployment's terms and patterns) over each speaker's stream, then the
 * spans of every detector (named entities included, found by the caller) masked utterance by utterance.
 * Pure: the text activity (../redact.ts) adds the named-entity requests, storage and checkpoints.
 */
import type {
  RedactionPattern,
  RedactionRules,
  RedactionTerm,
  StagedRedaction,
} from '../../../schemas/redaction.ts';
import { addressBlockSpans } from './addresses.ts';
import { birthDateSpans } from './birth-dates.ts';
import { speakerStreams, type DetectionUtterance, type Span } from './call-streams.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  compilePatterns,
  deploymentSpans,
  deploymentSpanUnits,
  type CompiledPattern,
} from './deployment-rules.ts';
import { emailSpans } from './emails.ts';
import { finishSpans, maskText, type MaskOptions } from './masking.ts';
import { numberSpans } from './number-spans.ts';

export type { DetectionUtterance, Span } from './call-streams.ts';

/** Rules as the detectors use them, compiled once. */
export interface CompiledRules extends MaskOptions {
  terms: readonly RedactionTerm[];
  patterns: readonly CompiledPattern[];
}

export function compileRules(rules: Partial<RedactionRules> = {}, digestKey?: Buffer): CompiledRules {
  const labels: Record<string, string> = {};
  const custom: readonly (RedactionTerm | RedactionPattern)[] = [
    ...(rules.terms ?? []),
    ...(rules.patterns ?? []),
  ];
  for (const rule of custom) if (rule.label && !labels[rule.kind]) labels[rule.kind] = rule.label;
  return {
    masks: rules.masks ?? {},
    labels,
    terms: rules.terms ?? [],
    patterns: compilePatterns(rules.patterns ?? []),
    ...(digestKey ? { digestKey } : {}),
  };
}

/** Spans of our own detectors (numbers, birth dates, e-mail addresses, address numbers). */
function builtInSpans(utterances: readonly DetectionUtterance[]): Span[] {
  const spans: Span[] = [];
  for (const stream of speakerStreams(utterances)) {
    spans.push(
      ...numberSpans(utterances, stream),
      ...birthDateSpans(utterances, stream),
      ...emailSpans(utterances, stream),
    );
  }
  for (const u of utterances) spans.push(...addressBlockSpans(u.index, u.text));
  return spans;
}

/** Spans of every local detector; `utterances` in time order. */
export function localSpans(utterances: readonly DetectionUtterance[], rules: CompiledRules): Span[] {
  const spans = builtInSpans(utterances);
  for (const stream of speakerStreams(utterances)) spans.push(...deploymentSpans(utterances, stream, rules));
  return spans;
}

/**
 * {@link localSpans} as the text activity runs them: `check` (a deadline) before each unit of the
 * deployment's terms and patterns, and the event loop free between units, so heartbeats and the worker's
 * other activities go on while a large rule set works through a long call.
 */
export async function localSpansWithin(
  utterances: readonly DetectionUtterance[],
  rules: CompiledRules,
  check: () => void,
): Promise<Span[]> {
  const spans = builtInSpans(utterances);
  for (const stream of speakerStreams(utterances)) {
    for (const unit of deploymentSpanUnits(utterances, stream, rules)) {
      spans.push(...unit);
      await nextTurn();
      check();
    }
  }
  return spans;
}

export interface RedactedUtterance {
  index: number;
  text: string;
  redactions: StagedRedaction[];
}

/** Every utterance with `spans` (of any detector) masked; utterances without a span come back as they were. */
export function redactUtterances(
  utterances: readonly DetectionUtterance[],
  spans: readonly Span[],
  rules: CompiledRules,
  /** A deadline, checked while values found once are looked for everywhere else. */
  check?: () => void,
): RedactedUtterance[] {
  const byUtterance = new Map<number, Span[]>();
  for (const span of finishSpans(utterances, spans, rules, check)) {
    const list = byUtterance.get(span.utterance) ?? [];
    list.push(span);
    byUtterance.set(span.utterance, list);
  }
  return utterances.map((u) => {
    const own = byUtterance.get(u.index);
    return own
      ? { index: u.index, ...maskText(u.text, own, rules) }
      : { index: u.index, text: u.text, redactions: [] };
  });
}

/** Local detection and masking in one: what callpipe redacts without the service. */
export function redactLocally(
  utterances: readonly DetectionUtterance[],
  rules: CompiledRules,
): RedactedUtterance[] {
  return redactUtterances(utterances, localSpans(utterances, rules), rules);
}
