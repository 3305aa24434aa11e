/**
 * Temporal payloads encrypted with AES-256-GCM (Temporal's documented PayloadCodec pattern): workflow
 * inputs (source keys, manifest metadata), results, queries, memos and failure messages are ciphertext
 * in Temporal's database; search attributes are not payloads and stay plaintext (they hold no personal
 * data). Each encrypted payload names its key in its metadata, so keys rotate: the first configured key
 * encrypts, every configured key decrypts. A payload without the encrypted encoding (written before the
 * codec) passes through as it is, so existing workflows keep replaying.
 *
 * Key material comes from `CALLPIPE_PAYLOAD_KEYS` or the file `CALLPIPE_PAYLOAD_KEYS_FILE` names, one
 * `<key id>:<base64 of 32 bytes>` per entry. No error message ever holds key material, only key ids.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ensurePrivateFile } from '../schemas/private-file.ts';
import { fileURLToPath } from 'node:url';
import {
  METADATA_ENCODING_KEY,
  type DataConverter,
  type Payload,
  type PayloadCodec,
} from '@temporalio/common';
// CommonJS: Node's ESM loader sees only its default export.
import protos from '@temporalio/proto';
import type { TemporalConfig } from '../schemas/config.ts';

const { Payload: PayloadMessage } = protos.temporal.api.common.v1;

/** The encoding of an encrypted payload, and the metadata naming its key (as Temporal's samples name them). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A key of the codec: its id (in every payload it encrypts) and its 32 bytes. */
interface PayloadKey {
  id: string;
  key: Buffer;
}

/** Keys as configured, the first encrypts. */
export interface PayloadKeys {
  keys: PayloadKey[];
  /** Where they come from, for messages: the variable or the file. */
  source: string;
}

/** Bad key material, or a payload the keys cannot open: names key ids and sources, never material. */
export class PayloadKeyError extends Error {
  override name = 'PayloadKeyError';
}

/**
 * Parses `<id>:<base64>` entries separated by commas, spaces or lines (`#` starts a comment). Throws
 * {@link PayloadKeyError} naming `source` and the entry (by key id or position) at fault.
 */
export function parsePayloadKeys(text: string, source: string): PayloadKeys {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*/, ''))
    .flatMap((line) => line.split(/[\s,]+/))
    .filter(Boolean);
  if (entries.length === 0)
    throw new PayloadKeyError(`${source}: no payload key (expected <key id>:<base64 key>)`);
  const keys: PayloadKey[] = [];
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    if (!KEY_ID.test(id))
      throw new PayloadKeyError(
        `${source}: entry ${i + 1} is not <key id>:<base64 key> with a key id of letters, digits, '.', '_' or '-'`,
      );
    const encoded = entry.slice(colon + 1);
    if (!BASE64.test(encoded) || encoded.length % 4 !== 0)
      throw new PayloadKeyError(`${source}: key "${id}" is not valid base64`);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== KEY_BYTES)
      throw new PayloadKeyError(`${source}: key "${id}" is ${key.length} bytes; AES-256 needs ${KEY_BYTES}`);
    if (keys.some((k) => k.id === id)) throw new PayloadKeyError(`${source}: key "${id}" is listed twice`);
    keys.push({ id, key });
  });
  return { keys, source };
}

/** The keys `config` names (the variable wins over the file), or undefined when none is configured. */
export function payloadKeysOf(
  config: Pick<TemporalConfig, 'payloadKeys' | 'payloadKeysFile'>,
): PayloadKeys | undefined {
  if (config.payloadKeys) return parsePayloadKeys(config.payloadKeys, 'CALLPIPE_PAYLOAD_KEYS');
  if (!config.payloadKeysFile) return undefined;
  const source = `payload keys file ${config.payloadKeysFile}`;
  let text: string;
  try {
    text = readFileSync(config.payloadKeysFile, 'utf8');
  } catch (err) {
    throw new PayloadKeyError(
      `${source}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parsePayloadKeys(text, source);
}

/** A new key entry, `<id>:<base64>`, for a keys file (the local stack's). */
function newPayloadKeyEntry(id: string): string {
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

/**
 * A keys file at `path` (the local stack's, under CALLPIPE_HOME): made with one new key, readable by the
 * user alone (0600), when there is none; kept as it is when there is one (what the stack's Temporal holds
 * was encrypted with it), and checked.
 */
export function ensurePayloadKeysFile(path: string): PayloadKeys {
  ensurePrivateFile(path, () => {
    const id = `local-${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;
    const header =
      '# Payload keys of the local stack: <key id>:<base64 key>; the first encrypts, all decrypt.\n';
    return `${header}${newPayloadKeyEntry(id)}\n`;
  });
  return payloadKeysOf({ payloadKeysFile: path })!;
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : undefined);

/** The codec: encrypts every payload with the first key; decrypts by the key id each payload names. */
export class EncryptionCodec implements PayloadCodec {
  readonly #keys: PayloadKeys;
  readonly #byId: Map<string, Buffer>;

  constructor(keys: PayloadKeys) {
    if (keys.keys.length === 0) throw new PayloadKeyError(`${keys.source}: no payload key`);
    this.#keys = keys;
    this.#byId = new Map(keys.keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, key } = this.#keys.keys[0]!;
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, key, iv);
      // The key id is authenticated with the data: a payload relabelled with another key id fails.
      cipher.setAAD(utf8(id));
      const inner = PayloadMessage.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(inner), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(id) },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return this.decodeSync(payloads);
  }

  /** {@link decode} for callers that cannot wait (the decryption itself never does). */
  decodeSync(payloads: Payload[]): Payload[] {
    return payloads.map((payload) => {
      if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
      const id = text(payload.metadata?.[KEY_ID_METADATA]);
      if (!id) throw new PayloadKeyError('an encrypted payload names no key id');
      const key = this.#byId.get(id);
      if (!key)
        throw new PayloadKeyError(
          `a payload is encrypted with key "${id}", which is not among the payload keys of ${this.#keys.source}`,
        );
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES)
        throw new PayloadKeyError(`a payload encrypted with key "${id}" is truncated`);
      try {
        const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES));
        decipher.setAAD(utf8(id));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const inner = Buffer.concat([
          decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
          decipher.final(),
        ]);
        // A plain object, as the SDK's own payloads are (a protobuf message would JSON-encode its bytes).
        return PayloadMessage.toObject(PayloadMessage.decode(inner)) as Payload;
      } catch {
        throw new PayloadKeyError(
          `a payload encrypted with key "${id}" fails authentication: it was altered, or encrypted with another key of that id`,
        );
      }
    });
  }
}

/**
 * The module Temporal loads (workers, in the workflow sandbox too) for its failure converter: failure
 * messages and stack traces go into an encoded payload, so the codec encrypts them as well.
 */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.ts', import.meta.url));

/**
 * The data converter of every client and worker callpipe creates: failure messages and stack traces
 * encoded as payloads (as the workflow bundle does, workers/runtime.ts), and encrypted by the codec when
 * keys are configured.
 */
export function payloadDataConverter(keys: PayloadKeys | undefined): DataConverter {
  return {
    failureConverterPath: FAILURE_CONVERTER_PATH,
    ...(keys ? { payloadCodecs: [new EncryptionCodec(keys)] } : {}),
  };
}
