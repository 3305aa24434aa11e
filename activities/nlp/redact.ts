/**
 * Redaction of a call's text (docs/personal-data.md), the step between the merged timeline and every
 * other text step: filler removal, the summary, sentiment and keywords all read the redacted timeline it
 * writes, so nothing they store can hold what it masked. Named entities come from the service (spec 01,
 * `/nlp/v1/ne`) in windows of whole turns (redaction/named-entities.ts); numbers, birth dates, e-mail
 * addresses, address numbers and the deployment's terms and patterns are found here
 * (redaction/redact-call.ts). The step's output holds where each redaction is, never what it hid.
 *
 * Fail-closed: a step that cannot finish (the service refuses a window, its 99997 budget is spent, the
 * deployment's terms and patterns overrun their time on this call: USER_RULES_SECONDS_PER_CALL) returns
 * `failed`, and the workflow fails the call rather than store unredacted text.
 */
import { redactionOutputSchema, type RedactionOutput } from '../../schemas/result.ts';
import { timelineSchema } from '../../schemas/transcript.ts';
import { metrics } from '../metrics.ts';
import { userRulesDeadline, UserRulesTimeExceeded } from '../../schemas/user-pattern.ts';
import { StepInputError } from './failures.ts';
import { inTimeOrder, readTimeline } from './call-text.ts';
import { DEFAULT_NE_WINDOW_CHARS, entitySpans, neWindows } from './redaction/named-entities.ts';
import {
  compileRules,
  localSpansWithin,
  redactUtterances,
  type CompiledRules,
  type DetectionUtterance,
  type RedactedUtterance,
  type Span,
} from './redaction/redact-call.ts';
import { runStep, type NlpActivityDeps, type StepRun } from './step.ts';
import type { NlpStepOutput, RedactTextInput } from './types.ts';

export async function redactText(
  deps: NlpActivityDeps,
  input: RedactTextInput,
  rules: CompiledRules = compileRules(),
): Promise<NlpStepOutput> {
  const maxChars = input.maxWindowChars ?? DEFAULT_NE_WINDOW_CHARS;
  const inputs = JSON.stringify([input.timelineKey, maxChars]);
  return runStep<Span[], typeof redactionOutputSchema>(
    deps,
    'redaction',
    input,
    inputs,
    redactionOutputSchema,
    async (run: StepRun<Span[]>) => {
      const timeline = await readTimeline(deps.store, input.timelineKey);
      const ordered = inTimeOrder(timeline.utterances);
      const utterances: DetectionUtterance[] = ordered.map((u) => ({
        index: u.index,
        speaker: u.speaker,
        start: u.start,
        end: u.end,
        text: u.text,
      }));
      const windows = neWindows(utterances, maxChars);
      // One window after another: each is one request; a failure half-way keeps the windows before it.
      for (const [w, window] of windows.entries()) {
        if (!run.done.has(w)) {
          const res = await run.request((o) => deps.service.nlp.namedEntities(window.text, o));
          run.done.set(w, entitySpans(utterances, window, res.result));
        }
        run.progress(w + 1, windows.length);
      }
      const deadline = userRulesDeadline(deps.options?.userRulesSeconds);
      let redacted: Map<number, RedactedUtterance>;
      try {
        const local = await localSpansWithin(utterances, rules, deadline.check);
        const spans = [...local, ...[...run.done.values()].flat()];
        redacted = new Map(
          redactUtterances(utterances, spans, rules, deadline.check).map((r) => [r.index, r]),
        );
      } catch (err) {
        if (err instanceof UserRulesTimeExceeded) throw new StepInputError(`redaction: ${err.message}`);
        throw err;
      }
      const maskedTimeline = timelineSchema.parse({
        ...timeline,
        utterances: timeline.utterances.map((u) => ({ ...u, text: redacted.get(u.index)?.text ?? u.text })),
      });
      await deps.store.put(input.redactedTimelineKey, JSON.stringify(maskedTimeline), {
        contentType: 'application/json',
      });
      const counts: Record<string, number> = {};
      const records: RedactionOutput['utterances'] = [];
      for (const u of ordered) {
        const own = redacted.get(u.index)?.redactions ?? [];
        if (own.length === 0) continue;
        for (const r of own) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
        records.push({
          index: u.index,
          track: u.track,
          speaker: u.speaker,
          start: u.start,
          end: u.end,
          redactions: own,
        });
      }
      metrics.redacted(counts);
      return {
        step: 'redaction' as const,
        callId: input.callId,
        timelineKey: input.redactedTimelineKey,
        utterances: records,
        counts,
        windows: windows.length,
        detectors: [
          'ne' as const,
          'pattern' as const,
          ...(rules.terms.length + rules.patterns.length > 0 ? ['term' as const] : []),
        ],
      };
    },
  );
}
