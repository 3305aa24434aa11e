/**
 * Output keys can never escape the output prefix (issue 7, item 5): whatever the object key, the call id
 * derived from it is a safe folder name, and both key builders refuse an unsafe id or prefix.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { callIdOf, slug } from '../../activities/storage/call-id.ts';
import {
  assertSafeCallId,
  callOutputKeys,
  KeyError,
  normalizePrefix,
  normalizeLocation,
  outputLocationOf,
} from '../../schemas/call-keys.ts';

/** The result key of a call under a prefix in the test bucket. */
function callOutputKey(prefix: string, callId: string): string {
  return callOutputKeys({ bucket: BUCKET, prefix }, callId).result;
}

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const BUCKET = 'callpipe';

/** Inside `prefix`, one folder deep, no `.`/`..` segment, no empty segment. */
function expectInside(key: string, prefix: string): void {
  expect(key.startsWith(prefix)).toBe(true);
  const rest = key.slice(prefix.length).split('/');
  expect(rest).toHaveLength(2);
  for (const segment of key.split('/')) {
    expect(segment).not.toBe('');
    expect(segment).not.toBe('.');
    expect(segment).not.toBe('..');
  }
}

const HOSTILE_KEYS = [
  '../x.wav',
  '../../etc/passwd',
  'in/../../../results/other-call/result.json',
  'in/..',
  'in/.',
  '..',
  '.',
  '...',
  '....wav',
  '/absolute/path.wav',
  '//double//slash.wav',
  'C:\\calls\\..\\x.wav',
  'in/..\\..\\x.wav',
  'in/%2e%2e%2fx.wav',
  'in/\u0000nul.wav',
  'in/line\nbreak.wav',
  'in/東京センター/通話①.wav',
  'in/ａｂｃ．ｗａｖ', // full-width: NFKC makes it `abc.wav`
  'in/‥／x.wav', // two-dot leader and a full-width solidus
  'in/ .wav',
  'in/-.wav',
  'in/_hidden.wav',
  'in/' + 'a'.repeat(5000) + '.wav',
  'in/' + '../'.repeat(300) + 'x.wav',
  'in/' + 'é'.repeat(2000),
  '',
];

describe('callIdOf: every key gives a safe folder name', () => {
  it.each(HOSTILE_KEYS.map((k) => [JSON.stringify(k).slice(0, 60), k]))('%s', (_label, key) => {
    const id = callIdOf({ bucket: BUCKET, key });
    expect(id).toMatch(SAFE);
    expect(id).not.toContain('..');
    expect(() => assertSafeCallId(id)).not.toThrow();
    expectInside(callOutputKey('results/', id), 'results/');
    expectInside(callOutputKey('results', id), 'results/');
  });

  it('two keys that slug alike are still two calls (the hash of bucket + key tells them apart)', () => {
    const a = callIdOf({ bucket: BUCKET, key: 'in/../x.wav' });
    const b = callIdOf({ bucket: BUCKET, key: 'in/x.wav' });
    expect(slug('in/../x.wav')).toBe(slug('in/x.wav'));
    expect(a).not.toBe(b);
  });

  it('holds for 5,000 random keys of path characters, dots, slashes and non-ASCII', () => {
    const random = seededRandom(7);
    const alphabet = [
      '.',
      '.',
      '/',
      '/',
      '\\',
      ' ',
      '-',
      '_',
      'a',
      'Z',
      '9',
      '%',
      '\u0000',
      'é',
      '東',
      '‥',
      '／',
    ];
    for (let i = 0; i < 5000; i++) {
      const length = 1 + Math.floor(random() * 80);
      const key = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const id = callIdOf({ bucket: BUCKET, key });
      expect(id, JSON.stringify(key)).toMatch(SAFE);
      expect(id, JSON.stringify(key)).not.toContain('..');
    }
  });

  it('caps the id at 48 characters of name and 8 of hash, however long the key', () => {
    const id = callIdOf({ bucket: BUCKET, key: `in/${'x'.repeat(10_000)}.wav` });
    expect(id.length).toBeLessThanOrEqual(48 + 1 + 8);
  });
});

describe('callOutputKey refuses ids a caller could choose to escape', () => {
  const UNSAFE_IDS = [
    '..',
    '.',
    '../x',
    'a/../../b',
    'a/b',
    '/abs',
    '.hidden',
    '-dash-first',
    '',
    'a..b',
    'a\\b',
    'a b',
    'a\u0000b',
    '通話',
    'x'.repeat(129),
  ];
  it.each(UNSAFE_IDS.map((id) => [JSON.stringify(id).slice(0, 40), id]))('%s', (_label, id) => {
    expect(() => callOutputKey('results/', id)).toThrow(KeyError);
    expect(() => callOutputKey('', id)).toThrow(/unsafe call id/);
  });

  it('accepts the longest safe id and keeps it inside the prefix', () => {
    const id = `a${'b'.repeat(127)}`;
    expectInside(callOutputKey('results/', id), 'results/');
  });
});

describe('output prefixes', () => {
  it.each(['../up', 'results/../../x', '/abs/', 'a/./b', 'a\\b', 'a\u0001b'])('refuses %j', (prefix) => {
    expect(() => normalizePrefix(prefix)).toThrow(KeyError);
    expect(() => normalizeLocation({ bucket: BUCKET, prefix })).toThrow(KeyError);
    expect(() => outputLocationOf(`s3://${BUCKET}/${prefix}`, BUCKET)).toThrow(KeyError);
  });

  it('refuses non-S3 URLs as output', () => {
    expect(() => outputLocationOf('file:///etc/', BUCKET)).toThrow(KeyError);
  });

  it('normalizes doubled and trailing slashes without leaving the prefix', () => {
    expect(callOutputKey('results//night/', 'call-1')).toBe('results/night/call-1/result.json');
    expect(callOutputKey('', 'call-1')).toBe('call-1/result.json');
  });
});
