/**
 * A disclosure request (`callpipe export`): everything callpipe holds about some calls, copied to a folder
 * or an S3 prefix of the requester's choosing, with a manifest of what was copied (where each file came
 * from, its size and SHA-256) and an audit record under the audit prefix that names the calls and counts
 * what went, never a value.
 *
 * What is held comes from the one listing `forget` erases by (call-objects.ts), so a disclosure and an
 * erasure cover the same things. Copied: the call's outputs (result.json, transcript.vtt, call.html,
 * error.json, the redacted audio) and its rows of every analysis table as JSON; the recording and the
 * unredacted copy only when asked for by name. Not copied, and said so in the manifest: staging (a run's
 * intermediates, deleted when a call succeeds) and the table locator (bookkeeping).
 *
 * Nothing is half-written: every call is resolved before a byte is copied (an unknown call id refuses the
 * whole request), the files are gathered in a private folder first, and the export appears at once (a
 * folder renamed into place) or ends with its manifest (S3: `manifest.json` is written last, and what was
 * uploaded is deleted again when anything fails).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readlink, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertSafeCallId,
  ERROR_FILE,
  KeyError,
  normalizePrefix,
  RESULT_FILE,
} from '../../schemas/call-keys.ts';
import { TABLE_NAMES, type TableName, type TableRow } from '../../schemas/tables.ts';
import { onBucket, type ObjectStore } from '../storage/object-store.ts';
import { readRows } from '../tables/table-files.ts';
import { callHoldings, type CallHoldings, type CallObject, type CallPlaces } from './call-objects.ts';
import { eventsPrefix } from '../events/event-store.ts';
import { auditKey } from '../../schemas/lifecycle.ts';
import type {
  ExportAuditRecord,
  ExportedCall,
  ExportedFile,
  ExportedKind,
  ExportManifest,
} from '../../schemas/export.ts';

/** Where an export goes: a local folder (made by the export) or an S3 prefix (empty before). */
export type ExportTarget = { kind: 'dir'; path: string } | { kind: 's3'; bucket: string; prefix: string };

export interface ExportOptions {
  /** The recordings themselves (the customer's audio as recorded): only when asked for. */
  recordings?: boolean;
  /** The unredacted copies (CALLPIPE_UNREDACTED_PREFIX): only when asked for. */
  unredacted?: boolean;
  /** The request's id (default: made here, letters only). */
  requestId?: string;
  now?: () => Date;
}

export interface ExportResult {
  manifest: ExportManifest;
  /** Where the export is: the folder, or `s3://bucket/prefix`. */
  location: string;
  auditKey: string;
}

/** Refused before anything is written: the request as asked cannot be served. */
export class ExportRequestError extends Error {
  override name = 'ExportRequestError';
}

export const MANIFEST_FILE = 'manifest.json';

const NOT_EXPORTED: Record<string, string> = {
  staging: "a run's intermediates (recognized text unredacted), kept only until the call succeeds",
  index: "the tables' bookkeeping (where the call's rows are)",
  'table-file': 'exported as rows (tables/<table>.json)',
  recording: 'the recording: only with --recordings',
  unredacted: 'the unredacted copy: only with --unredacted',
};

/** A request id of letters only (ids with long digit runs read as numbers to the personal-data rules). */
function newRequestId(): string {
  const letters = [...randomBytes(12)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
  return `export-${letters}`;
}

/** Rows as JSON: dates as ISO text, 64-bit integers as numbers when exact, else as text. */
function rowsJson(rows: TableRow[]): string {
  return `${JSON.stringify(
    rows,
    (_k, v: unknown) => {
      if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
      if (v instanceof Map) return Object.fromEntries(v);
      return v;
    },
    2,
  )}\n`;
}

/** The calls' holdings, refusing the whole request when any call is unknown. */
async function resolveCalls(
  store: ObjectStore,
  places: CallPlaces,
  callIds: readonly string[],
  options: ExportOptions,
): Promise<CallHoldings[]> {
  const ids = [...new Set(callIds)];
  if (ids.length === 0) throw new ExportRequestError('no call to export');
  for (const id of ids) {
    try {
      assertSafeCallId(id);
    } catch (err) {
      throw new ExportRequestError((err as KeyError).message);
    }
  }
  const holdings = await callHoldings(store, places, ids, { recordings: options.recordings === true });
  const dir = normalizePrefix(places.output.prefix);
  const unknown = holdings.filter(
    (h) =>
      !h.objects.some(
        (o) =>
          o.bucket === places.output.bucket &&
          (o.key === `${dir}${h.callId}/${RESULT_FILE}` || o.key === `${dir}${h.callId}/${ERROR_FILE}`),
      ),
  );
  if (unknown.length > 0)
    throw new ExportRequestError(
      `no call ${unknown.map((h) => h.callId).join(', ')} in s3://${places.output.bucket}/${dir} ` +
        `(neither ${RESULT_FILE} nor ${ERROR_FILE}); nothing was exported`,
    );
  if (options.recordings) {
    const missing = holdings.filter((h) => !h.objects.some((o) => o.kind === 'recording'));
    if (missing.length > 0)
      throw new ExportRequestError(
        `the recording of call ${missing.map((h) => h.callId).join(', ')} is no longer there ` +
          '(deleted or moved); export without --recordings, or restore it; nothing was exported',
      );
  }
  return holdings;
}

/** Copies an object to `path`, hashing it on the way; resolves to its size and SHA-256. */
async function download(
  store: ObjectStore,
  object: { bucket: string; key: string },
  path: string,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await mkdir(dirname(path), { recursive: true });
  await pipeline(await onBucket(store, object.bucket).getStream(object.key), tap, createWriteStream(path));
  return { size, sha256: hash.digest('hex') };
}

async function writeText(path: string, text: string): Promise<{ size: number; sha256: string }> {
  const body = Buffer.from(text, 'utf8');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, body);
  return { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
}

/** The path of an object of the call inside the export (its place below the call's folder kept). */
function exportedPath(callId: string, o: CallObject, places: CallPlaces): string {
  // Named by the call, not by its key: a recorder's file name may hold the caller's number.
  if (o.kind === 'recording') return `${callId}/recording${extname(o.key)}`;
  if (o.kind === 'events') {
    // `events/<day>/<callId>/<id>.ndjson` (or `events/failed/...`) kept, less the call's own folder.
    const from = eventsPrefix(places.output);
    const rest = o.key.startsWith(from) ? o.key.slice(from.length) : basename(o.key);
    return `${callId}/events/${rest.replace(`/${callId}/`, '/')}`;
  }
  const from =
    o.kind === 'unredacted' && places.unredacted
      ? `${normalizePrefix(places.unredacted.prefix)}${callId}/`
      : `${normalizePrefix(places.output.prefix)}${callId}/`;
  const rest = o.key.startsWith(from) ? o.key.slice(from.length) : basename(o.key);
  return `${callId}/${o.kind === 'unredacted' ? 'unredacted/' : ''}${rest}`;
}

/** The call's rows of every table, from the files its locator names (its own file or a compacted part). */
async function tableRowsOf(
  store: ObjectStore,
  places: CallPlaces,
  h: CallHoldings,
): Promise<Map<TableName, { rows: TableRow[]; from: string[] }>> {
  const keys = [
    ...h.objects.filter((o) => o.kind === 'table-file'),
    ...h.shared.filter((s) => s.kind === 'table-part'),
  ];
  const tables = onBucket(store, places.tables.bucket);
  const out = new Map<TableName, { rows: TableRow[]; from: string[] }>();
  for (const { key } of keys) {
    const table = TABLE_NAMES.find((t) => key.includes(`/${t}/dt=`));
    if (!table) continue;
    const rows = ((await readRows(tables, table, key)) ?? []).filter((r) => r.call_id === h.callId);
    if (rows.length === 0) continue;
    const entry = out.get(table) ?? { rows: [], from: [] };
    entry.rows.push(...rows);
    entry.from.push(`s3://${places.tables.bucket}/${key}`);
    out.set(table, entry);
  }
  return out;
}

/** Gathers one call's files into `root`; returns what it wrote. */
async function gatherCall(
  store: ObjectStore,
  places: CallPlaces,
  h: CallHoldings,
  options: ExportOptions,
  root: string,
): Promise<ExportedCall> {
  const files: ExportedFile[] = [];
  const skipped = new Map<string, number>();
  for (const o of h.objects) {
    const wanted =
      o.kind === 'results' ||
      o.kind === 'redacted-audio' ||
      o.kind === 'events' ||
      (o.kind === 'recording' && options.recordings === true) ||
      (o.kind === 'unredacted' && options.unredacted === true);
    if (!wanted) {
      skipped.set(o.kind, (skipped.get(o.kind) ?? 0) + 1);
      continue;
    }
    const path = exportedPath(h.callId, o, places);
    const { size, sha256 } = await download(store, o, join(root, ...path.split('/')));
    files.push({ path, kind: o.kind as ExportedKind, from: [`s3://${o.bucket}/${o.key}`], size, sha256 });
  }
  for (const [table, { rows, from }] of await tableRowsOf(store, places, h)) {
    const path = `${h.callId}/tables/${table}.json`;
    const { size, sha256 } = await writeText(join(root, ...path.split('/')), rowsJson(rows));
    files.push({ path, kind: 'table-rows', from, size, sha256 });
  }
  files.sort((a, b) => a.path.localeCompare(b.path));
  return {
    callId: h.callId,
    files,
    notExported: [...skipped].map(([kind, objects]) => ({
      kind,
      objects,
      reason: NOT_EXPORTED[kind] ?? 'not part of a disclosure',
    })),
  };
}

/**
 * A folder that does not exist or is empty: an export never mixes with other files. A symbolic link is
 * refused, naming its target: the export is renamed into place, which would replace the link, not fill
 * the folder it points to.
 */
async function assertEmptyDir(path: string): Promise<void> {
  const link = await lstat(path).catch(() => undefined);
  if (link?.isSymbolicLink()) {
    const target = await readlink(path).catch(() => undefined);
    throw new ExportRequestError(
      `--to ${path} is a symbolic link${target ? ` (to ${target})` : ''}: give the folder itself (or a new folder's path)`,
    );
  }
  const entries = await readdir(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    if (err.code === 'ENOTDIR') throw new ExportRequestError(`--to ${path} is a file, not a folder`);
    throw err;
  });
  if (entries.length > 0)
    throw new ExportRequestError(`--to ${path} is not empty: an export goes to a folder of its own`);
}

async function assertEmptyPrefix(store: ObjectStore, target: { bucket: string; prefix: string }) {
  const page = await onBucket(store, target.bucket).listPage(target.prefix, undefined, 1);
  if (page.objects.length > 0)
    throw new ExportRequestError(
      `--to s3://${target.bucket}/${target.prefix} is not empty: an export goes to a prefix of its own`,
    );
}

/** Every file under `root`, as export paths. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(root.length + 1)
        .split(/[\\/]/)
        .join('/'),
    );
}

/** Exports `callIds` to `target` (see the file's comment). */
export async function exportCalls(
  store: ObjectStore,
  places: CallPlaces,
  callIds: readonly string[],
  target: ExportTarget,
  options: ExportOptions,
): Promise<ExportResult> {
  const now = options.now ?? (() => new Date());
  const requestId = options.requestId ?? newRequestId();
  const s3Target =
    target.kind === 's3' ? { bucket: target.bucket, prefix: normalizePrefix(target.prefix) } : undefined;
  const dirTarget = target.kind === 'dir' ? resolve(target.path) : undefined;
  if (dirTarget) await assertEmptyDir(dirTarget);
  else await assertEmptyPrefix(store, s3Target!);
  const holdings = await resolveCalls(store, places, callIds, options);

  // Gathered beside the target folder (one file system: renamed into place at once), or in the temp folder.
  const parent = dirTarget ? dirname(dirTarget) : tmpdir();
  await mkdir(parent, { recursive: true });
  const root = await mkdtemp(join(parent, '.callpipe-export-'));
  try {
    const calls: ExportedCall[] = [];
    for (const h of holdings) calls.push(await gatherCall(store, places, h, options, root));
    const files = calls.flatMap((c) => c.files);
    const manifest: ExportManifest = {
      requestId,
      exportedAt: now().toISOString(),
      options: { recordings: options.recordings === true, unredacted: options.unredacted === true },
      calls,
      totals: { calls: calls.length, files: files.length, bytes: files.reduce((n, f) => n + f.size, 0) },
    };
    const manifestFile = await writeText(join(root, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const audit: ExportAuditRecord = {
      reason: 'export',
      requestId,
      at: manifest.exportedAt,
      calls: calls.map((c) => c.callId),
      options: manifest.options,
      counts: countsOf(calls),
      destination: s3Target ? `s3://${s3Target.bucket}/` : 'local folder',
      manifestSha256: manifestFile.sha256,
    };
    // Beside forget's and retention's records, at the root of the output bucket.
    const audited = auditKey('export', requestId);
    const auditStore = onBucket(store, places.output.bucket);
    const writeAudit = () =>
      auditStore.put(audited, `${JSON.stringify(audit, null, 2)}\n`, { contentType: 'application/json' });
    if (dirTarget) {
      await writeAudit();
      await rmdir(dirTarget).catch(() => undefined);
      await rename(root, dirTarget);
      return { manifest, location: dirTarget, auditKey: audited };
    }
    await uploadAll(store, root, s3Target!);
    return { manifest, location: `s3://${s3Target!.bucket}/${s3Target!.prefix}`, auditKey: audited };

    /** Files, then the audit record, then the manifest: an export with a manifest is whole and audited. */
    async function uploadAll(s: ObjectStore, from: string, to: { bucket: string; prefix: string }) {
      const dest = onBucket(s, to.bucket);
      const written: string[] = [];
      try {
        for (const path of (await filesUnder(from)).filter((p) => p !== MANIFEST_FILE)) {
          const key = `${to.prefix}${path}`;
          written.push(key);
          await dest.putFile(key, join(from, ...path.split('/')));
        }
        await writeAudit();
        written.push(`${to.prefix}${MANIFEST_FILE}`);
        await dest.putFile(`${to.prefix}${MANIFEST_FILE}`, join(from, MANIFEST_FILE), {
          contentType: 'application/json',
        });
      } catch (err) {
        await dest.deleteKeys(written).catch(() => undefined);
        throw err;
      }
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function countsOf(calls: ExportedCall[]): ExportAuditRecord['counts'] {
  const byKind: Record<string, { files: number; bytes: number }> = {};
  for (const f of calls.flatMap((c) => c.files)) {
    const k = (byKind[f.kind] ??= { files: 0, bytes: 0 });
    k.files += 1;
    k.bytes += f.size;
  }
  const files = calls.flatMap((c) => c.files);
  return { calls: calls.length, files: files.length, bytes: files.reduce((n, f) => n + f.size, 0), byKind };
}
