/**
 * The payload codec: AES-256-GCM payloads that name their key, keys that rotate (the first encrypts, all
 * decrypt), plaintext payloads of before the codec passed through, tampering refused, and errors that
 * name a key id or a source, never key material. Also the data converter as the SDK loads it (failure
 * messages encoded, then encrypted) and the local stack's keys file.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  decodeFromPayloadsAtIndex,
  decodeOptionalFailureToOptionalError,
  encodeErrorToFailure,
  encodeToPayloads,
  loadDataConverter,
} from '@temporalio/common/lib/internal-non-workflow/index.js';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  KEY_ID_METADATA,
  PayloadKeyError,
  ensurePayloadKeysFile,
  parsePayloadKeys,
  payloadDataConverter,
  payloadKeysOf,
} from '../../workers/payload-codec.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { isolatedStackConfig, stackEnv, stackRecordOf } from '../../cli/stack/stack.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-codec-'));
  dirs.push(dir);
  return dir;
}

const material = () => randomBytes(32).toString('base64');
const OLD = material();
const NEW = material();
const keys = (text: string) => parsePayloadKeys(text, 'CALLPIPE_PAYLOAD_KEYS');

const INPUT = { sourceKey: 'input/09012345678_20261124-1015.wav', metadata: { customer_id: 'C-4711' } };
const plain = () => defaultPayloadConverter.toPayload(INPUT);
const str = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');
/** Everything a payload holds, as text: what Temporal's database would store. */
const stored = (p: Payload) =>
  JSON.stringify(p, (_, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));

describe('the payload codec', () => {
  it('round-trips a payload, encrypted under the first key, its id in the metadata', async () => {
    const codec = new EncryptionCodec(keys(`k2:${NEW}, k1:${OLD}`));
    const [encoded] = await codec.encode([plain()]);
    expect(str(encoded!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(str(encoded!.metadata![KEY_ID_METADATA])).toBe('k2');
    expect(stored(encoded!)).not.toContain('09012345678');
    expect(stored(encoded!)).not.toContain('C-4711');
    expect(stored(encoded!)).not.toContain('json/plain');
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(INPUT);
    // A fresh IV each time: the same value never encrypts the same.
    const [again] = await codec.encode([plain()]);
    expect(Buffer.from(again!.data!).equals(Buffer.from(encoded!.data!))).toBe(false);
  });

  it('rotates: payloads of the old key still decrypt once a new key is listed first', async () => {
    const [underOld] = await new EncryptionCodec(keys(`k1:${OLD}`)).encode([plain()]);
    const rotated = new EncryptionCodec(keys(`k2:${NEW}\nk1:${OLD}`));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([underOld!]))[0]!)).toEqual(INPUT);
    const [underNew] = await rotated.encode([plain()]);
    expect(str(underNew!.metadata![KEY_ID_METADATA])).toBe('k2');
    // Dropping the old key: its payloads name it, and no key material, in the error.
    const withoutOld = new EncryptionCodec(keys(`k2:${NEW}`));
    const err = await withoutOld.decode([underOld!]).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(PayloadKeyError);
    expect((err as Error).message).toContain('"k1"');
    expect((err as Error).message).toContain('CALLPIPE_PAYLOAD_KEYS');
    expect((err as Error).message).not.toContain(NEW);
    expect((err as Error).message).not.toContain(OLD);
  });

  it('passes plaintext payloads written before the codec through unchanged', async () => {
    const codec = new EncryptionCodec(keys(`k1:${OLD}`));
    const before = plain();
    const [decoded] = await codec.decode([before]);
    expect(decoded).toBe(before);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(INPUT);
  });

  it('refuses a payload altered in its data, or relabelled with another key id', async () => {
    const codec = new EncryptionCodec(keys(`k2:${NEW}, k1:${OLD}`));
    const [encoded] = await codec.encode([plain()]);
    const data = Buffer.from(encoded!.data!);
    data[20] = data[20]! ^ 1;
    const flipped = { ...encoded!, data };
    await expect(codec.decode([flipped])).rejects.toThrow(/key "k2" fails authentication/);
    const relabelled = {
      ...encoded!,
      metadata: { ...encoded!.metadata, [KEY_ID_METADATA]: Buffer.from('k1') },
    };
    await expect(codec.decode([relabelled])).rejects.toThrow(/key "k1" fails authentication/);
    const truncated = { ...encoded!, data: data.subarray(0, 10) };
    await expect(codec.decode([truncated])).rejects.toThrow(/key "k2" is truncated/);
  });
});

describe('payload keys', () => {
  it('are checked at load with the entry at fault named, never its material', () => {
    const bad: [string, RegExp][] = [
      [`k1:${randomBytes(16).toString('base64')}`, /key "k1" is 16 bytes; AES-256 needs 32/],
      ['k1:not*base64!', /key "k1" is not valid base64/],
      [`k1:${OLD.slice(0, -1)}`, /key "k1" is not valid base64/],
      [OLD, /entry 1 is not <key id>:<base64 key>/],
      [`k1:${OLD},k1:${NEW}`, /key "k1" is listed twice/],
      ['  # nothing\n', /no payload key/],
    ];
    for (const [text, expected] of bad) {
      const err = (() => {
        try {
          keys(text);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(err, text).toBeInstanceOf(PayloadKeyError);
      expect(err!.message).toMatch(expected);
      expect(err!.message).toMatch(/^CALLPIPE_PAYLOAD_KEYS: /);
      for (const secret of [OLD, NEW, OLD.slice(0, -1)]) expect(err!.message).not.toContain(secret);
    }
  });

  it('come from CALLPIPE_PAYLOAD_KEYS or the file CALLPIPE_PAYLOAD_KEYS_FILE names (the variable wins)', () => {
    const file = join(tempDir(), 'keys');
    writeFileSync(file, `# rotated 2026-11\nfile2:${NEW}\nfile1:${OLD}\n`);
    const fromFile = payloadKeysOf(loadConfig({ env: { CALLPIPE_PAYLOAD_KEYS_FILE: file } }).temporal);
    expect(fromFile!.keys.map((k) => k.id)).toEqual(['file2', 'file1']);
    const both = loadConfig({
      env: { CALLPIPE_PAYLOAD_KEYS_FILE: file, CALLPIPE_PAYLOAD_KEYS: `env:${OLD}` },
    });
    expect(payloadKeysOf(both.temporal)!.keys.map((k) => k.id)).toEqual(['env']);
    expect(payloadKeysOf(loadConfig({ env: {} }).temporal)).toBeUndefined();
    expect(() => payloadKeysOf({ payloadKeysFile: join(tempDir(), 'missing') })).toThrow(
      /payload keys file .*missing: cannot be read \(ENOENT\)/,
    );
  });

  it('reach the stack record as where they are, never as key material', () => {
    const config = isolatedStackConfig(tempDir(), 1);
    const fromFile = stackRecordOf(
      stackEnv({ ...config, temporal: { ...config.temporal, payloadKeysFile: '/run/keys' } }),
    );
    expect(fromFile.env!.CALLPIPE_PAYLOAD_KEYS_FILE).toBe('/run/keys');
    const fromVariable = stackRecordOf(
      stackEnv({ ...config, temporal: { ...config.temporal, payloadKeys: `k1:${OLD}` } }),
    );
    expect(JSON.stringify(fromVariable)).not.toContain(OLD);
    expect(fromVariable.secrets).toMatchObject({ CALLPIPE_PAYLOAD_KEYS: 'caller' });
  });

  it('of the local stack: a file made once, 0600, and kept as it is afterwards', () => {
    const file = join(tempDir(), 'payload-keys');
    const made = ensurePayloadKeysFile(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(made.keys).toHaveLength(1);
    const text = readFileSync(file, 'utf8');
    expect(ensurePayloadKeysFile(file).keys[0]!.key.equals(made.keys[0]!.key)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });
});

describe('the data converter of clients and workers', () => {
  it('encrypts values and failure messages, and still reads what was written before it', async () => {
    const secure = loadDataConverter(payloadDataConverter(keys(`k1:${OLD}`)));
    const payloads = await encodeToPayloads(secure, INPUT);
    expect(payloads!.map(stored).join()).not.toContain('C-4711');
    expect(await decodeFromPayloadsAtIndex(secure, 0, payloads)).toEqual(INPUT);

    const error = ApplicationFailure.nonRetryable('cannot read input/09012345678_20261124-1015.wav');
    const failure = await encodeErrorToFailure(secure, error);
    const text = JSON.stringify(failure, (_, v: unknown) =>
      v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
    );
    expect(failure.message).toBe('Encoded failure');
    expect(text).not.toContain('09012345678');
    const back = await decodeOptionalFailureToOptionalError(secure, failure);
    expect(back!.message).toBe(error.message);

    // A failure and a payload of before the codec, as old histories hold them.
    const plainConverter = loadDataConverter({});
    const old = await encodeErrorToFailure(plainConverter, ApplicationFailure.nonRetryable('old reason'));
    expect((await decodeOptionalFailureToOptionalError(secure, old))!.message).toBe('old reason');
    const oldPayloads = await encodeToPayloads(plainConverter, INPUT);
    expect(await decodeFromPayloadsAtIndex(secure, 0, oldPayloads)).toEqual(INPUT);
  });
});
