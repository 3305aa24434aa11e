/**
 * Keyed digests of personal values: what callpipe keeps so that `callpipe find` can tell which calls
 * hold a phone number, an e-mail address or a customer id without the value itself being stored.
 * HMAC-SHA-256 with a secret of the deployment (`CALLPIPE_DIGEST_KEY` or the file of
 * `CALLPIPE_DIGEST_KEY_FILE`): without the key a digest cannot be matched, nor a short value (a phone
 * number has few enough possibilities to try them all) guessed from it.
 *
 * The value is normalized per kind first, so one value in different notations gives one digest: digit
 * kinds keep their digits alone (`090-1234-5678`, `０９０ １２３４ ５６７８` and `09012345678` are one; a phone
 * number with Japan's country code, `+81 90-1234-5678`, is its national form),
 * other kinds are NFKC, trimmed, inner spaces collapsed, lower case (an address, a name, a customer id).
 * A kind is not part of the digest: a number said in a call (`phone`) and the same number in a manifest
 * column (`phone`, `customer`) are found by the same question.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ensurePrivateFile } from './private-file.ts';

/** Kinds whose values are numbers: their digits are the value, whatever separates them. */
export const DIGEST_DIGIT_KINDS: ReadonlySet<string> = new Set([
  'cardNumber',
  'myNumber',
  'phone',
  'postalCode',
  'bankAccount',
  'idNumber',
]);

/** Fewer bytes of key material than this is refused: a short key can be guessed like the values it hides. */
const DIGEST_KEY_MIN_BYTES = 16;

/** A digest key that cannot be used: names its source, never its material. */
export class DigestKeyError extends Error {
  override name = 'DigestKeyError';
}

/** The value of `kind` as it is digested: see the module comment. */
export function normalizePersonalValue(kind: string, value: string): string {
  const nfkc = value.normalize('NFKC');
  if (kind === 'phone' && /^\s*\+81/.test(nfkc)) {
    // Japan's country code as an ANI gives it (+81 90…) is the trunk prefix 0 as people say the number.
    const national = nfkc.replace(/^\s*\+81/, '').replace(/[^0-9]/g, '');
    return national.startsWith('0') ? national : `0${national}`;
  }
  if (DIGEST_DIGIT_KINDS.has(kind)) return nfkc.replace(/[^0-9]/g, '');
  return nfkc.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** A key's material, checked. */
export function digestKeyFrom(material: string, source: string): Buffer {
  const key = Buffer.from(material.trim(), 'utf8');
  if (key.length < DIGEST_KEY_MIN_BYTES)
    throw new DigestKeyError(`${source}: the digest key is shorter than ${DIGEST_KEY_MIN_BYTES} bytes`);
  return key;
}

/** The keyed digest (hex) of `value` of `kind`; undefined when nothing is left of it once normalized. */
export function personalDigest(key: Buffer, kind: string, value: string): string | undefined {
  const normalized = normalizePersonalValue(kind, value);
  if (normalized === '') return undefined;
  return createHmac('sha256', key).update(normalized, 'utf8').digest('hex');
}

export interface DigestKeySettings {
  digestKey?: string | undefined;
  digestKeyFile?: string | undefined;
}

/** The key the settings name (the variable wins over the file), or undefined when none is configured. */
export function digestKeyOf(settings: DigestKeySettings): Buffer | undefined {
  if (settings.digestKey) return digestKeyFrom(settings.digestKey, 'CALLPIPE_DIGEST_KEY');
  if (!settings.digestKeyFile) return undefined;
  const source = `digest key file ${settings.digestKeyFile}`;
  let text: string;
  try {
    text = readFileSync(settings.digestKeyFile, 'utf8');
  } catch (err) {
    throw new DigestKeyError(`${source}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return digestKeyFrom(text, source);
}

/**
 * The local stack's key file at `path` (under CALLPIPE_HOME): made with 32 random bytes, readable by the
 * user alone (0600), when there is none; kept when there is one (the digests already stored were made
 * with it), and checked.
 */
export function ensureDigestKeyFile(path: string): Buffer {
  ensurePrivateFile(path, () => `${randomBytes(32).toString('base64')}\n`);
  return digestKeyOf({ digestKeyFile: path })!;
}

/** A value as it may be echoed back (a command's answer, a log): its kind and how long it is, nothing of it. */
export function maskedValue(kind: string, value: string): string {
  const n = normalizePersonalValue(kind, value).length;
  return `[${kind}: ${n} ${DIGEST_DIGIT_KINDS.has(kind) ? 'digits' : 'characters'}]`;
}
