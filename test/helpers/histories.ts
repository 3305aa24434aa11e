/**
 * The recorded workflow histories the replay test (test/unit/workflows.replay.test.ts) guards determinism
 * with: integration tests (real runs) and the workflow tests of batches refresh them when
 * `CALLPIPE_RECORD_HISTORIES=1`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolPaths } from '../../cli/tools/provision.ts';
import type { PipelineClient } from '../../cli/stack-client.ts';
import type { Payload } from '@temporalio/common';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import type { TemporalConfig } from '../../schemas/config.ts';
import { ENCRYPTED_ENCODING, EncryptionCodec, payloadKeysOf } from '../../workers/payload-codec.ts';

const HISTORIES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** Writes a run's history as `temporal workflow show --output json` gives it (payloads decrypted), when asked to record. */
export function recordHistory(pc: PipelineClient, workflowId: string, name: string): void {
  if (!process.env.CALLPIPE_RECORD_HISTORIES) return;
  const json = execFileSync(toolPaths().temporal, [
    ...['workflow', 'show', '--workflow-id', workflowId, '--output', 'json'],
    ...['--address', pc.config.temporal.address, '--namespace', pc.config.temporal.namespace],
  ]);
  writeFileSync(join(HISTORIES, name), decryptedHistoryJson(json.toString('utf8'), pc.config.temporal));
}

/** Writes a history the client fetched (`handle.fetchHistory()`, no codec), when asked to record. */
export function recordFetchedHistory(history: History, name: string): void {
  if (!process.env.CALLPIPE_RECORD_HISTORIES) return;
  writeFileSync(join(HISTORIES, name), `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
}

/**
 * A history as the client fetches it (`handle.fetchHistory()`), with every payload the codec encrypted
 * decrypted with `config`'s keys: what an operator reads through the codec server, for searches that
 * must see the values in payloads (a secret that must not be there, a reason that must).
 */
export function decryptPayloads(value: unknown, config: TemporalConfig): unknown {
  const keys = payloadKeysOf(config);
  if (!keys) return value;
  const codec = new EncryptionCodec(keys);
  const walk = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return v;
    if (Array.isArray(v)) return v.map(walk);
    const o = v as Record<string, unknown>;
    const encoding = (o.metadata as Record<string, unknown> | undefined)?.encoding;
    if (encoding instanceof Uint8Array && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING)
      return plainBytes(codec.decodeSync([o as Payload])[0]!);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x)]));
  };
  return walk(value);
}

/** A payload's bytes as Uint8Arrays, as the client gives them (a Buffer would JSON-encode as numbers). */
function plainBytes(p: Payload): Payload {
  const bytes = (b: Uint8Array | null | undefined) => (b ? new Uint8Array(b) : b);
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, b]) => [k, bytes(b)!])),
    data: bytes(p.data),
  };
}

/** A payload as `temporal workflow show --output json` prints it: metadata values and data in base64. */
interface JsonPayload {
  metadata: Record<string, string>;
  data?: string;
}

const ENCRYPTED_BASE64 = Buffer.from(ENCRYPTED_ENCODING).toString('base64');

/**
 * A history's JSON with every payload the stack's codec encrypted decrypted with `config`'s keys: a
 * fixture replays without the key of the throw-away stack that recorded it, as histories of before the
 * codec do.
 */
export function decryptedHistoryJson(json: string, config: TemporalConfig): string {
  const keys = payloadKeysOf(config);
  if (!keys) return json;
  const codec = new EncryptionCodec(keys);
  const history: unknown = JSON.parse(json, (_k, v: unknown) => {
    const p = v as JsonPayload | undefined;
    if (!p || typeof p !== 'object' || p.metadata?.encoding !== ENCRYPTED_BASE64) return v;
    const [plain] = codec.decodeSync([
      {
        metadata: Object.fromEntries(
          Object.entries(p.metadata).map(([k, b]) => [k, Buffer.from(b, 'base64')]),
        ),
        data: Buffer.from(p.data ?? '', 'base64'),
      },
    ]);
    const b64 = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('base64');
    return {
      metadata: Object.fromEntries(Object.entries(plain!.metadata ?? {}).map(([k, b]) => [k, b64(b)])),
      ...(plain!.data?.length ? { data: b64(plain!.data) } : {}),
    };
  });
  return `${JSON.stringify(history, null, 2)}\n`;
}
