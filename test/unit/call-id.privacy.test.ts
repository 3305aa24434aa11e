/**
 * Call ids hold no personal data (activities/storage/call-id.ts): recorders name files by caller number
 * and time, and the call id is in every key, search attribute, workflow id and log line.
 */
import { describe, expect, it } from 'vitest';
import {
  callIdOf,
  callIdRuleOf,
  givenCallIdProblem,
  personalDataIn,
  personalValuesInKey,
  reportedSource,
  slug,
  type CallIdRule,
} from '../../activities/storage/call-id.ts';
import { assertSafeCallId } from '../../schemas/call-keys.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { type CallIdMode } from '../../schemas/config.ts';
import { ManifestError, parseManifest } from '../../activities/backfill/manifest.ts';
import { createBackfillActivities } from '../../activities/backfill/backfill-activities.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';

const BUCKET = 'callpipe';
const id = (key: string, rule?: CallIdRule | CallIdMode) => callIdOf({ bucket: BUCKET, key }, rule);
const digitsIn = (text: string) => text.match(/\d{7,}/g) ?? [];

describe('auto (the default): a name with personal data gets a pseudonymous id', () => {
  it.each([
    ['in/09012345678_20261124-1015.wav', '09012345678', 'xxxxxxxxxxx_xxxxxxxx-xxxx-'],
    ['in/090-1234-5678.wav', '5678', 'xxx-xxxx-xxxx-'],
    ['in/+81 90 1234 5678 call.mp3', '1234', 'xx-xx-xxxx-xxxx-call-'],
    ['in/０９０１２３４５６７８.wav', '12345678', 'xxxxxxxxxxx-'],
    ['in/taro.yamada@example.co.jp_1015.wav', 'yamada', 'email_1015-'],
    ['in/agent7_1234567.wav', '1234567', 'agent7_xxxxxxx-'],
  ])('%s', (key, value, readable) => {
    const callId = id(key);
    expect(callId).not.toContain(value);
    expect(callId.startsWith(readable), callId).toBe(true);
    expect(callId).toMatch(new RegExp(`^${readable.replace(/[+]/g, '\\+')}[0-9a-f]{16}$`));
    expect(() => assertSafeCallId(callId)).not.toThrow();
    expect(digitsIn(callId.slice(0, -16))).toEqual([]);
  });

  it('the same key is always the same id; two numbers are two ids', () => {
    const a = id('in/09012345678_20261124-1015.wav');
    expect(id('in/09012345678_20261124-1015.wav')).toBe(a);
    const b = id('in/09087654321_20261124-1015.wav');
    expect(b).not.toBe(a);
    expect(b.slice(0, -16)).toBe(a.slice(0, -16));
    expect(callIdOf({ bucket: 'other', key: 'in/09012345678_20261124-1015.wav' })).not.toBe(a);
  });

  it('10,000 numbers of one minute give 10,000 ids', () => {
    const ids = new Set<string>();
    for (let n = 0; n < 10_000; n++) ids.add(id(`in/0901234${String(n).padStart(4, '0')}_20261124-1015.wav`));
    expect(ids.size).toBe(10_000);
  });

  it('a name without personal data keeps its readable id, as before', () => {
    for (const key of [
      'in/call-001.wav',
      'in/2026-11-24/agent-12_0930.wav',
      'in/rec 123456.wav',
      'in/東京.wav',
    ]) {
      expect(id(key)).toBe(id(key, 'slug'));
      expect(id(key)).toMatch(/-[0-9a-f]{8}$/);
    }
    expect(id('in/call-001.wav')).toMatch(/^call-001-[0-9a-f]{8}$/);
    // Six digits are not a run of seven; 2026-11-24 is three runs of 4, 2 and 2 digits with separators: eight.
    expect(id('in/rec 123456.wav')).toMatch(/^rec-123456-/);
  });

  it('a date written with separators is a run of eight digits too, masked so', () => {
    expect(id('in/rec-2026-11-24.wav')).toMatch(/^rec-xxxx-xx-xx-[0-9a-f]{16}$/);
  });
});

describe('slug and hash modes', () => {
  it('slug keeps the name as every release before did', () => {
    const callId = id('in/09012345678_20261124-1015.wav', 'slug');
    expect(callId).toMatch(/^09012345678_20261124-1015-[0-9a-f]{8}$/);
    expect(slug('in/09012345678_20261124-1015.wav')).toBe('09012345678_20261124-1015');
  });

  it('hash keeps no part of any name, stable and unique', () => {
    for (const key of ['in/yamada-taro.wav', 'in/call-001.wav', 'in/09012345678.wav']) {
      expect(id(key, 'hash')).toMatch(/^call-[0-9a-f]{16}$/);
      expect(id(key, 'hash')).toBe(id(key, 'hash'));
    }
    expect(id('in/a.wav', 'hash')).not.toBe(id('in/b.wav', 'hash'));
  });

  it('CALLPIPE_CALL_ID chooses the mode; auto by default; anything else refused by name', () => {
    expect(loadConfig({ env: {} }).callIds).toBe('auto');
    expect(loadConfig({ env: { CALLPIPE_CALL_ID: 'hash' } }).callIds).toBe('hash');
    expect(() => loadConfig({ env: { CALLPIPE_CALL_ID: 'phone' } })).toThrow(/CALLPIPE_CALL_ID/);
  });
});

describe('keyed with the deployment digest key', () => {
  it('a key changes the hash of a pseudonymous id (no guess can be checked without it), never a safe one', () => {
    const config = loadConfig({ env: { CALLPIPE_DIGEST_KEY: 'k'.repeat(32) } });
    const rule = callIdRuleOf(config);
    expect(rule.key).toBeDefined();
    const key = 'in/09012345678_20261124-1015.wav';
    expect(id(key, rule)).toMatch(/^xxxxxxxxxxx_xxxxxxxx-xxxx-[0-9a-f]{16}$/);
    expect(id(key, rule)).not.toBe(id(key));
    expect(id(key, rule)).toBe(
      id(key, callIdRuleOf(loadConfig({ env: { CALLPIPE_DIGEST_KEY: 'k'.repeat(32) } }))),
    );
    const other = callIdRuleOf(loadConfig({ env: { CALLPIPE_DIGEST_KEY: 'j'.repeat(32) } }));
    expect(id(key, other)).not.toBe(id(key, rule));
    expect(id('in/call-001.wav', rule)).toBe(id('in/call-001.wav'));
    expect(callIdRuleOf(loadConfig({ env: {} }))).toEqual({ mode: 'auto', key: undefined });
  });
});

describe('the rule', () => {
  it('finds 7+ digits and e-mail addresses only', () => {
    expect(personalDataIn('09012345678')).toBe('digits');
    expect(personalDataIn('a@b.jp')).toBe('email');
    expect(personalDataIn('call-123456_2026-11')).toBeUndefined();
  });

  it("a manifest's call_id with personal data is refused unless slug", () => {
    expect(givenCallIdProblem('cust-09012345678')).toMatch(/run of 7 or more digits/);
    expect(givenCallIdProblem('taro@example.com', 'hash')).toMatch(/e-mail address/);
    expect(givenCallIdProblem('cust-09012345678', 'slug')).toBeUndefined();
    expect(givenCallIdProblem('crm-123456')).toBeUndefined();
  });
});

describe('a manifest', () => {
  const csv = 'key,call_id\nin/09012345678_1015.wav,\nin/b.wav,cust-09012345678\nin/c.wav,crm-42\n';

  it('refuses a given call_id with personal data by its line, the value not echoed', async () => {
    const refusal = await parseManifest(csv, BUCKET).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(ManifestError);
    const { problems } = refusal as ManifestError;
    expect(problems).toEqual([expect.stringMatching(/^line 3: call_id holds a run of 7 or more digits/)]);
    expect(problems[0]).not.toContain('09012345678');
  });

  it('takes it under slug; a derived id of a phone-named row is pseudonymous either way', async () => {
    const entries = await parseManifest(csv, BUCKET, { callIds: { mode: 'slug' } });
    expect(entries.map((e) => e.callId)).toEqual([undefined, 'cust-09012345678', 'crm-42']);
    const derived = await parseManifest('key\nin/09012345678_1015.wav\n', BUCKET);
    expect(derived).toHaveLength(1);
    expect(id(derived[0]!.key)).toMatch(/^xxxxxxxxxxx_1015-[0-9a-f]{16}$/);
  });
});

describe('batch reports', () => {
  it("show a source's key with its personal data masked, the bucket as is; slug as is", () => {
    const uri = 's3://calls-1234567890/in/0312345678/09012345678_20261124-1015.wav';
    expect(reportedSource(uri)).toBe('s3://calls-1234567890/in/xxxxxxxxxx/xxxxxxxxxxx_xxxxxxxx-xxxx.wav');
    expect(reportedSource('s3://b/in/taro@example.jp.wav', 'hash')).toBe('s3://b/in/email');
    expect(reportedSource('s3://b/in/call-001.wav')).toBe('s3://b/in/call-001.wav');
    expect(reportedSource(uri, 'slug')).toBe(uri);
  });

  it('a report part is stored with its sources masked', async () => {
    const puts: { key: string; body: string }[] = [];
    const store = {
      withBucket: () => store,
      put: (key: string, body: string) => void puts.push({ key, body }),
    } as unknown as ObjectStore;
    const activities = createBackfillActivities({ store });
    await activities.writeReportPart({
      bucket: BUCKET,
      key: 'reports/b/parts/page-000000.json',
      rows: [{ callId: 'x', source: 's3://b/in/09012345678.wav', status: 'done' }],
    });
    expect(puts).toHaveLength(1);
    expect(puts[0]!.body).not.toContain('09012345678');
    expect(puts[0]!.body).toContain('s3://b/in/xxxxxxxxxxx.wav');
  });
});

describe("personalValuesInKey: what `find` indexes of a recording's key", () => {
  it.each([
    ['in/09012345678_20261124-1015.wav', [{ kind: 'phone', value: '09012345678' }]],
    ['in/09012345678-20261124-1015.wav', [{ kind: 'phone', value: '09012345678' }]],
    ['in/20261124-1015-090-1234-5678.wav', [{ kind: 'phone', value: '09012345678' }]],
    ['in/090-1234-5678.wav', [{ kind: 'phone', value: '09012345678' }]],
    ['in/+81 90 1234 5678 call.mp3', [{ kind: 'phone', value: '+819012345678' }]],
    ['in/０９０１２３４５６７８.wav', [{ kind: 'phone', value: '09012345678' }]],
    ['in/0312345678/2026-11-24/1015.wav', [{ kind: 'phone', value: '0312345678' }]],
    ['in/taro.yamada@example.co.jp_1015.wav', [{ kind: 'email', value: 'taro.yamada@example.co.jp' }]],
    ['in/agent7_1234567.wav', [{ kind: 'phone', value: '1234567' }]],
    // Date and time stamps alone are not numbers.
    ['in/20261124.wav', []],
    ['in/2026-11-24_10-15.wav', []],
    ['in/20261124101500.wav', []],
    ['in/call_202611241015.wav', []],
    ['in/agent7_call3.wav', []],
    // Not a valid date: a number.
    ['in/20261399.wav', [{ kind: 'phone', value: '20261399' }]],
    ['in/20261124251500.wav', [{ kind: 'phone', value: '20261124251500' }]],
  ])('%s', (key, values) => {
    expect(personalValuesInKey(key)).toEqual(values);
  });

  it('a key with values has a pseudonymous id; a date stamp is masked in ids all the same', () => {
    for (const key of ['in/09012345678_20261124-1015.wav', 'in/20261124101500.wav']) {
      expect(personalDataIn(key)).toBe('digits');
      expect(digitsIn(id(key).slice(0, -16))).toEqual([]);
    }
  });
});
