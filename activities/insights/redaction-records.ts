/**
 * The redaction records of a result, as the `redaction` rule reads them: which utterance held personal
 * data of which kind (never the value). Redaction (issue 15) records each redaction by kind and
 * position; this is the one place that knows where result.json keeps them, so the rule does not change
 * when that shape does. Read either way it may be kept: per utterance (`utterances[].redactions`) or
 * for the call (`redactions`, each naming its `utterance`). Undefined when the result has none at all,
 * that is when redaction did not run: the rule is then "unavailable", not "no personal data".
 */
export interface RedactionRecord {
  utterance: number;
  kind: string;
}

type Loose = Record<string, unknown>;
const isRecord = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

function kindOf(r: Loose): string | undefined {
  const kind = r.kind ?? r.type ?? r.class;
  return typeof kind === 'string' ? kind : undefined;
}

export function redactionRecords(call: object): RedactionRecord[] | undefined {
  const doc = call as Loose;
  let found = false;
  const out: RedactionRecord[] = [];
  const top = Array.isArray(doc.redactions)
    ? doc.redactions
    : isRecord(doc.redaction)
      ? doc.redaction.items
      : undefined;
  if (Array.isArray(top)) {
    found = true;
    for (const r of top) {
      if (!isRecord(r) || typeof r.utterance !== 'number') continue;
      const kind = kindOf(r);
      if (kind) out.push({ utterance: r.utterance, kind });
    }
  }
  for (const u of Array.isArray(doc.utterances) ? doc.utterances : []) {
    if (!isRecord(u) || !Array.isArray(u.redactions) || typeof u.index !== 'number') continue;
    found = true;
    for (const r of u.redactions) {
      const kind = isRecord(r) ? kindOf(r) : undefined;
      if (kind) out.push({ utterance: u.index, kind });
    }
  }
  return found ? out : undefined;
}
