/**
 * From spans to redacted text: masks per kind (labels, the last digits, off), overlapping spans of two
 * detectors as one redaction, a name found once redacted wherever it is said, and the records: the
 * mask's place in the redacted text and the value's in the original.
 */
import { describe, expect, it } from 'vitest';
import {
  compileRules,
  redactUtterances,
  type DetectionUtterance,
  type Span,
} from '../../activities/nlp/redaction/redact-call.ts';
import { localSpans } from '../../activities/nlp/redaction/redact-call.ts';
import { maskText } from '../../activities/nlp/redaction/masking.ts';
import type { RedactionRules } from '../../schemas/redaction.ts';

function utterances(...lines: [string, string][]): DetectionUtterance[] {
  return lines.map(([speaker, text], index) => ({
    index,
    speaker,
    start: index * 3,
    end: index * 3 + 2,
    text,
  }));
}

function run(u: DetectionUtterance[], extra: Span[] = [], rules: Partial<RedactionRules> = {}) {
  const compiled = compileRules(rules);
  return redactUtterances(u, [...localSpans(u, compiled), ...extra], compiled);
}

describe('masks', () => {
  it('each kind has its label by default; records give the mask and the value their places', () => {
    const u = utterances(['customer', '電話は090-1234-5678、メールはa.b@example.jpです']);
    const [out] = run(u);
    expect(out!.text).toBe('電話は[電話番号]、メールは[メールアドレス]です');
    expect(out!.redactions).toEqual([
      { kind: 'phone', begin: 3, end: 9, source: 'pattern', originalBegin: 3, originalEnd: 16 },
      { kind: 'email', begin: 14, end: 23, source: 'pattern', originalBegin: 21, originalEnd: 35 },
    ]);
    for (const r of out!.redactions) expect(out!.text.slice(r.begin, r.end)).toMatch(/^\[.*\]$/);
  });

  it('keepLast shows the last digits of the whole value, on its last part only', () => {
    const u = utterances(['customer', 'ゼロ九ゼロの一二三四の、'], ['customer', '五六七八です']);
    const masks = { phone: { style: 'keepLast' as const, digits: 4 } };
    const out = run(u, [], { masks });
    expect(out.map((o) => o.text)).toEqual(['[電話番号]の、', '[電話番号 ***5678]です']);
    // A value no longer than the digits kept shows none of them.
    const short = run(utterances(['agent', '契約番号は？'], ['customer', '四三二一です']), [], {
      masks: { idNumber: { style: 'keepLast', digits: 4 } },
    });
    expect(short[1]!.text).toBe('[番号]です');
  });

  it('a kind configured off is not redacted; a custom label replaces the default', () => {
    const u = utterances(['customer', '電話は090-1234-5678、メールはa.b@example.jpです']);
    const [out] = run(u, [], {
      masks: { email: { style: 'off' }, phone: { style: 'label', label: '<TEL>' } },
    });
    expect(out!.text).toBe('電話は<TEL>、メールはa.b@example.jpです');
    expect(out!.redactions.map((r) => r.kind)).toEqual(['phone']);
  });
});

describe('spans', () => {
  it('overlapping spans of two detectors are one redaction, named by the more specific kind', () => {
    const text = '090-1234-5678です';
    const spans: Span[] = [
      { utterance: 0, begin: 0, end: 8, kind: 'idNumber', source: 'ne' },
      { utterance: 0, begin: 0, end: 13, kind: 'phone', source: 'pattern' },
    ];
    const out = maskText(text, spans);
    expect(out.text).toBe('[電話番号]です');
    expect(out.redactions).toHaveLength(1);
    expect(out.redactions[0]).toMatchObject({ kind: 'phone', originalBegin: 0, originalEnd: 13 });
  });

  it('same-kind spans only spaces apart join; different kinds side by side stay two', () => {
    const joined = maskText('山田 太郎です', [
      { utterance: 0, begin: 0, end: 2, kind: 'name', source: 'ne' },
      { utterance: 0, begin: 3, end: 5, kind: 'name', source: 'ne' },
    ]);
    expect(joined.text).toBe('[氏名]です');
    const two = maskText('山田090', [
      { utterance: 0, begin: 0, end: 2, kind: 'name', source: 'ne' },
      { utterance: 0, begin: 2, end: 5, kind: 'idNumber', source: 'pattern' },
    ]);
    expect(two.text).toBe('[氏名][番号]');
    expect(two.redactions).toHaveLength(2);
  });

  it('a name found once is redacted wherever it is said; an address runs over its block numbers', () => {
    const u = utterances(
      ['customer', '山田太郎です。'],
      ['agent', '山田太郎様ですね。'],
      ['customer', '住所は渋谷区神南一丁目二番三号です。'],
    );
    const out = run(u, [
      { utterance: 0, begin: 0, end: 4, kind: 'name', source: 'ne' },
      { utterance: 2, begin: 3, end: 6, kind: 'address', source: 'ne' },
    ]);
    expect(out.map((o) => o.text)).toEqual(['[氏名]です。', '[氏名]様ですね。', '住所は[住所]です。']);
    expect(out[1]!.redactions[0]).toMatchObject({ kind: 'name', source: 'ne' });
  });
});
