/**
 * Identity of a call and of its processing run, derived from the source so that the same recording
 * submitted twice is one call and one workflow (docs/design.md; issue 5 item 1).
 *
 * - callId: stable per object (bucket + key); names the output folder, so re-running finds the earlier
 *   `result.json`. It is also the workflow id, a search attribute, every output key, the tables'
 *   `call_id`, the pages and the logs: plaintext wherever callpipe goes, so it holds no personal data.
 *   Recorders name files by caller number and time (`09012345678_20261124-1015.wav`), so the rule
 *   ({@link CallIdMode}, config `callIds`) is:
 *   - `slug`: `<file name slug>-<8 hex>`, as every release before this rule.
 *   - `auto` (default): the slug form for a file name without personal data; a name with a run of
 *     {@link PERSONAL_DIGITS} or more digits (spaces, `-`, `.` and brackets between them allowed, as
 *     phone numbers are written) or an e-mail address gets the pseudonymous form: those digits masked as
 *     `x` and the address as `email` in the readable part, and 16 hex of hash (the readable part no
 *     longer tells such calls apart, so the hash alone must: 64 bits).
 *   - `hash`: always `call-<16 hex>`: no part of the name (for names that carry personal data of other
 *     shapes, such as customers' names).
 * - workflowId: the callId plus the object's version (etag, or size + mtime): a changed file under the
 *   same key is new work; the same version is the same workflow.
 */
import { createHash, createHmac } from 'node:crypto';
import type { RecordingSource } from '../../schemas/recording.ts';
import type { CallIdMode, Config } from '../../schemas/config.ts';
import { digestKeyOf } from '../../schemas/personal-digest.ts';

const MAX_SLUG = 48;
/** The shortest run of digits taken for personal data (a phone, customer or card number). */
const PERSONAL_DIGITS = 7;

/** The first `length` hex digits of the SHA-256 of `text`: short, stable names for ids. */
export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * How a deployment makes call ids: the mode, and the deployment's digest key (schemas/personal-digest.ts)
 * when it has one. Keyed, a pseudonymous id's hash cannot be checked against a guess (a known number and
 * each minute of a day are few enough to try them all); without a key it is plain SHA-256.
 */
export interface CallIdRule {
  mode: CallIdMode;
  key?: Buffer | undefined;
}

const rules = new WeakMap<object, CallIdRule>();

/** The rule of `config` (its key file read once per configuration). */
export function callIdRuleOf(config: Pick<Config, 'callIds' | 'redaction'>): CallIdRule {
  let rule = rules.get(config.redaction);
  if (!rule || rule.mode !== config.callIds) {
    rule = { mode: config.callIds, key: digestKeyOf(config.redaction) };
    rules.set(config.redaction, rule);
  }
  return rule;
}

/** The hash part of a pseudonymous call id: 16 hex (64 bits) of the object (bucket + key). */
function pseudonymHash(bucketKey: string, key: Buffer | undefined): string {
  const text = `callpipe-call-id\u0000${bucketKey}`;
  if (!key) return shortHash(text, 16);
  return createHmac('sha256', key).update(text).digest('hex').slice(0, 16);
}

// Digits with one separator at most between them, as numbers are written (`090-1234-5678`, `+81 90 …`).
const DIGIT_RUN = /\d(?:[-. ()]?\d)*/g;
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;

/** The file name of a key without its extension, NFKC (full-width digits are digits). */
function nameOf(key: string): string {
  const base = key.split('/').pop() ?? key;
  return base.replace(/\.[A-Za-z0-9]{1,5}$/, '').normalize('NFKC');
}

const digitCount = (run: string) => run.replace(/\D/g, '').length;

/** What personal data `text` holds by the rule of call ids: `digits`, `email`, or undefined. */
export function personalDataIn(text: string): 'digits' | 'email' | undefined {
  const name = text.normalize('NFKC');
  if (name.match(EMAIL)) return 'email';
  if ((name.match(DIGIT_RUN) ?? []).some((run) => digitCount(run) >= PERSONAL_DIGITS)) return 'digits';
  return undefined;
}

/** Digits that are a date or time stamp: a valid `YYYYMMDD` (1900–2099), alone or with `hhmm` or `hhmmss`. */
function isStamp(digits: string): boolean {
  const m = /^((?:19|20)\d\d)(\d\d)(\d\d)(\d\d)?(\d\d)?(\d\d)?$/.exec(digits);
  if (!m || ![8, 12, 14].includes(digits.length)) return false;
  const [, y, mo, d, h = '00', mi = '00', s = '00'] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  return (
    date.getUTCMonth() === Number(mo) - 1 &&
    date.getUTCDate() === Number(d) &&
    Number(h) < 24 &&
    Number(mi) < 60 &&
    Number(s) < 60
  );
}

/** The digits of `groups` (a run split at its separators) without a date/time stamp at its start or end. */
function withoutStamps(groups: string[]): string {
  let from = 0;
  let to = groups.length;
  for (let n = to; n > from; n--)
    if (isStamp(groups.slice(from, n).join(''))) {
      from = n;
      break;
    }
  for (let n = from; n < to; n++)
    if (isStamp(groups.slice(n, to).join(''))) {
      to = n;
      break;
    }
  return groups.slice(from, to).join('');
}

/** A personal value a recording's key holds: a number (`phone`) or an e-mail address (`email`). */
export interface KeyPersonalValue {
  kind: 'phone' | 'email';
  value: string;
}

/**
 * The personal values `key` (every segment of it, NFKC) holds, for `callpipe find`: each e-mail address,
 * and each run of digits of the call id rule ({@link PERSONAL_DIGITS} or more) as a phone number. A run
 * that is only a date or a time stamp (`20261124`, `2026-11-24`, `20261124-1015`, `20261124101500`: a
 * valid date, 1900–2099, then hours, minutes, seconds) is not a number, nor is such a stamp joined to a
 * number (`09012345678-20261124-1015` holds `09012345678`); both are masked in ids all the same. A `+`
 * before a run is kept (`+81…` is a Japanese number in its national form once digested).
 */
export function personalValuesInKey(key: string): KeyPersonalValue[] {
  const text = key.normalize('NFKC');
  const found: KeyPersonalValue[] = [];
  for (const m of text.matchAll(EMAIL)) found.push({ kind: 'email', value: m[0] });
  const rest = text.replace(EMAIL, ' ');
  for (const m of rest.matchAll(DIGIT_RUN)) {
    const digits = withoutStamps(m[0].split(/[-. ()]/));
    if (digits.length < PERSONAL_DIGITS) continue;
    // The `+` of a country code belongs to the number when no stamp was cut from its start.
    const plus = rest[m.index - 1] === '+' && m[0].replace(/\D/g, '').startsWith(digits);
    found.push({ kind: 'phone', value: `${plus ? '+' : ''}${digits}` });
  }
  return found;
}

/** `name` with each e-mail address as `email` and each run's digits as `x` (its separators kept). */
function masked(name: string): string {
  return name
    .replace(EMAIL, 'email')
    .replace(DIGIT_RUN, (run) => (digitCount(run) >= PERSONAL_DIGITS ? run.replace(/\d/g, 'x') : run));
}

/** Letters, digits, `-`, `_` only (no path separators, never `..`), at most {@link MAX_SLUG}. */
function cleaned(name: string): string {
  const text = name
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    // A call id starts with a letter or digit (assertSafeCallId): `_draft.wav` must not make one that
    // every output write then refuses.
    .replace(/^[-_]+|-+$/g, '')
    .slice(0, MAX_SLUG);
  return text || 'call';
}

/** A slug of the file name: letters, digits, `-`, `_` only (no path separators, never `..`). */
export function slug(name: string): string {
  return cleaned(nameOf(name));
}

export function callIdOf(
  source: Pick<RecordingSource, 'bucket' | 'key'>,
  rule: CallIdRule | CallIdMode = 'auto',
): string {
  const { mode, key } = typeof rule === 'string' ? { mode: rule, key: undefined } : rule;
  const object = `${source.bucket}/${source.key}`;
  if (mode === 'hash') return `call-${pseudonymHash(object, key)}`;
  const name = nameOf(source.key);
  if (mode === 'auto' && personalDataIn(name))
    return `${cleaned(masked(name))}-${pseudonymHash(object, key)}`;
  return `${cleaned(name)}-${shortHash(object)}`;
}

/**
 * A recording's `s3://bucket/key` as a batch report stores it (report.json, report.csv, the night
 * report's pages): under `auto` and `hash` each run of digits and each e-mail address of the key masked as
 * in call ids (the bucket as is); `slug`: as is. The key itself stays in the call's result.json.
 */
export function reportedSource(uri: string, rule: CallIdRule | CallIdMode = 'auto'): string {
  const mode = typeof rule === 'string' ? rule : rule.mode;
  const m = /^(s3:\/\/[^/]*\/)(.*)$/s.exec(uri);
  if (mode === 'slug' || !m) return mode === 'slug' ? uri : masked(uri.normalize('NFKC'));
  const key = m[2]!.normalize('NFKC');
  return personalDataIn(key) ? `${m[1]}${masked(key)}` : uri;
}

/**
 * Why a call id a user gave (a manifest's `call_id`) may not be used under `mode`, or undefined: an id
 * is as plaintext as a derived one, so `auto` and `hash` refuse one with personal data by the same rule.
 */
export function givenCallIdProblem(callId: string, mode: CallIdMode = 'auto'): string | undefined {
  if (mode === 'slug') return undefined;
  const found = personalDataIn(callId);
  if (!found) return undefined;
  const what = found === 'email' ? 'an e-mail address' : `a run of ${PERSONAL_DIGITS} or more digits`;
  return `call_id holds ${what}, personal data that would be in every key, log and search attribute: give another id or leave it empty for a pseudonymous one (CALLPIPE_CALL_ID=slug allows it)`;
}

export function workflowIdOf(source: RecordingSource, callId = callIdOf(source)): string {
  const version = source.etag ?? `size-${source.size ?? 'unknown'}`;
  return `call-${callId}-${shortHash(version, 12)}`;
}
