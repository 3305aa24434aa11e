/**
 * Keyed digests of personal values: one value in different notations is one digest, another key or
 * another value is another digest, a key too short or unreadable is refused by name; redaction records
 * carry the digest of the value they mask (spoken numerals read as digits), never the value.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import {
  compileRules,
  localSpans,
  redactUtterances,
  type DetectionUtterance,
} from '../../activities/nlp/redaction/redact-call.ts';
import {
  DigestKeyError,
  digestKeyFrom,
  digestKeyOf,
  ensureDigestKeyFile,
  maskedValue,
  normalizePersonalValue,
  personalDigest,
} from '../../schemas/personal-digest.ts';

const key = digestKeyFrom('a-test-key-of-the-deployment', 'test');
const other = digestKeyFrom('another-deployment-s-own-key', 'test');

describe('normalization', () => {
  it('digit kinds keep their digits alone, whatever the notation', () => {
    for (const v of ['090-1234-5678', '０９０ １２３４ ５６７８', '(090) 1234 5678', '09012345678'])
      expect(normalizePersonalValue('phone', v)).toBe('09012345678');
    expect(normalizePersonalValue('cardNumber', '4111 1111-1111 1111')).toBe('4111111111111111');
    // An ANI in E.164 is the number as people say it; only a phone's country code is read so.
    expect(normalizePersonalValue('phone', '+81 90-1234-5678')).toBe('09012345678');
    expect(normalizePersonalValue('phone', '+81 (0)3-1234-5678')).toBe('0312345678');
    expect(normalizePersonalValue('idNumber', '+81 90-1234-5678')).toBe('819012345678');
  });

  it('text kinds are NFKC, trimmed, inner spaces collapsed, lower case', () => {
    expect(normalizePersonalValue('email', '  Taro.Yamada@Example.JP ')).toBe('taro.yamada@example.jp');
    expect(normalizePersonalValue('email', 'ｔａｒｏ＠ｅｘａｍｐｌｅ．ｊｐ')).toBe('taro@example.jp');
    expect(normalizePersonalValue('name', ' 山田\u3000 太郎 ')).toBe('山田 太郎');
    expect(normalizePersonalValue('customer', 'C-00123')).toBe('c-00123');
  });
});

describe('digests', () => {
  it('the same value in different notations gives the same digest', () => {
    const d = personalDigest(key, 'phone', '090-1234-5678');
    expect(d).toMatch(/^[0-9a-f]{64}$/);
    expect(personalDigest(key, 'phone', '０９０１２３４５６７８')).toBe(d);
    expect(personalDigest(key, 'email', 'A@Example.jp')).toBe(personalDigest(key, 'email', 'a@example.JP '));
  });

  it('another key or another value gives another digest; nothing left gives none', () => {
    const d = personalDigest(key, 'phone', '09012345678');
    expect(personalDigest(other, 'phone', '09012345678')).not.toBe(d);
    expect(personalDigest(key, 'phone', '09012345679')).not.toBe(d);
    expect(personalDigest(key, 'phone', 'no digits')).toBeUndefined();
  });

  it('a short key is refused naming its source, never its material', () => {
    expect(() => digestKeyFrom('short', 'CALLPIPE_DIGEST_KEY')).toThrow(DigestKeyError);
    expect(() => digestKeyFrom('short', 'CALLPIPE_DIGEST_KEY')).toThrow(/CALLPIPE_DIGEST_KEY/);
    expect(() => digestKeyFrom('short', 'CALLPIPE_DIGEST_KEY')).not.toThrow(/short:/);
    expect(() => digestKeyOf({ digestKeyFile: '/nonexistent/digest-key' })).toThrow(/cannot be read/);
    expect(digestKeyOf({})).toBeUndefined();
  });

  it('the local key file is made once (0600) and kept', () => {
    const path = join(tempDir('digest-key-'), 'digest-key');
    const first = ensureDigestKeyFile(path);
    const text = readFileSync(path, 'utf8');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(ensureDigestKeyFile(path).equals(first)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(digestKeyOf({ digestKey: 'x'.repeat(20), digestKeyFile: path })!.equals(first)).toBe(false);
  });

  it('a masked echo tells the kind and length, no digit of the value', () => {
    const echo = maskedValue('phone', '090-1234-5678');
    expect(echo).toBe('[phone: 11 digits]');
  });
});

describe('redaction records', () => {
  const u = (text: string, index = 0): DetectionUtterance => ({
    index,
    speaker: 'customer',
    start: index * 3,
    end: index * 3 + 2,
    text,
  });

  it('each record carries the digest of the value it masked, and nothing of the value', () => {
    const rules = compileRules({}, key);
    const said = [u('電話は090-1234-5678です'), u('メールはTaro@Example.jpです', 1)];
    const out = redactUtterances(said, localSpans(said, rules), rules);
    const [phone] = out[0]!.redactions;
    const [email] = out[1]!.redactions;
    expect(phone).toMatchObject({ kind: 'phone', digest: personalDigest(key, 'phone', '09012345678') });
    expect(email).toMatchObject({ kind: 'email', digest: personalDigest(key, 'email', 'taro@example.jp') });
    expect(JSON.stringify(out.map((o) => o.redactions))).not.toMatch(/1234|example/i);
  });

  it('a number said in words has the digest of its digits', () => {
    const rules = compileRules({}, key);
    const said = [u('電話番号はゼロキューゼロ、イチニーサンヨン、ゴーロクナナハチです')];
    const [out] = redactUtterances(said, localSpans(said, rules), rules);
    expect(out!.redactions.map((r) => r.digest)).toContain(personalDigest(key, 'phone', '09012345678'));
  });

  it('without a key no record carries a digest', () => {
    const rules = compileRules({});
    const said = [u('電話は090-1234-5678です')];
    const [out] = redactUtterances(said, localSpans(said, rules), rules);
    expect(out!.redactions).toHaveLength(1);
    expect(out!.redactions[0]!.digest).toBeUndefined();
  });
});
