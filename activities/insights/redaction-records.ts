/**
 * The redaction records of a result, as the `redaction` rule reads them: which utterance held personal
 * data of which kind (never the value). Redaction (issue 15) writes `redaction` (the call's summary:
 * counts per kind, which detectors ran) and `utterances[].redactions` (kind and place of each mask);
 * this is the one place the rule learns where they are, so the rule does not change when that shape
 * does.
 *
 * Whether redaction ran is the summary's presence (or, failing it, any utterance's records): a call in
 * which redaction ran and found nothing has no personal data ("no"), while a result from before
 * redaction existed has no records at all, and the rule is then "unavailable", not "no personal data".
 */
import type { RedactionSummary, ResultDocument } from '../../schemas/result.ts';

export interface RedactionRecord {
  utterance: number;
  kind: string;
}

export type RedactedCall = Pick<ResultDocument, 'utterances'> & {
  /** Present when redaction ran (result.json's summary): only whether it is there is read. */
  redaction?: Partial<RedactionSummary> | undefined;
};

export function redactionRecords(call: RedactedCall): RedactionRecord[] | undefined {
  const ran = call.redaction !== undefined || call.utterances.some((u) => u.redactions !== undefined);
  if (!ran) return undefined;
  return call.utterances.flatMap((u) =>
    (u.redactions ?? []).map((r) => ({ utterance: u.index, kind: r.kind })),
  );
}
