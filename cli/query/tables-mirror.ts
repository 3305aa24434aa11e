/**
 * A local copy of the analysis tables for `callpipe query`: DuckDB reads S3 only through its httpfs
 * extension, which is not built into the registry's bindings and would be downloaded from outside at
 * run time. So the Parquet files under the tables prefix are mirrored into a local folder, fetching only
 * what changed (by ETag) and removing what compaction removed; the bookkeeping under `_callpipe/` stays
 * in S3.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import pLimit from 'p-limit';
import { listObjectsUnder, type ObjectStore } from '../../activities/storage/object-store.ts';
import { normalizePrefix } from '../../schemas/call-keys.ts';
import { TABLE_NAMES } from '../../schemas/tables.ts';

const DOWNLOADS_AT_ONCE = 8;
const INDEX = '.mirror.json';

export interface MirrorResult {
  dir: string;
  files: number;
  downloaded: number;
  removed: number;
  bytes: number;
}

function localFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.parquet'))
      // `parentPath` from Node 20.12 on; `path` before.
      .map((e) =>
        relative(dir, join(e.parentPath ?? (e as { path?: string }).path ?? dir, e.name))
          .split(sep)
          .join('/'),
      )
  );
}

/** Brings `dir` to the tables under `prefix` in `store`'s bucket; returns what it did. */
export async function mirrorTables(store: ObjectStore, prefix: string, dir: string): Promise<MirrorResult> {
  const root = normalizePrefix(prefix);
  mkdirSync(dir, { recursive: true });
  const indexPath = join(dir, INDEX);
  const known: Record<string, string> = existsSync(indexPath)
    ? (JSON.parse(readFileSync(indexPath, 'utf8')) as Record<string, string>)
    : {};
  const remote = new Map<string, { etag: string; size: number }>();
  for (const table of TABLE_NAMES) {
    for (const o of await listObjectsUnder(store, `${root}${table}/`)) {
      if (o.key.endsWith('.parquet'))
        remote.set(o.key.slice(root.length), { etag: o.etag ?? `${o.size}`, size: o.size });
    }
  }
  const limit = pLimit(DOWNLOADS_AT_ONCE);
  let downloaded = 0;
  let bytes = 0;
  await Promise.all(
    [...remote.entries()].map(([name, info]) =>
      limit(async () => {
        const path = join(dir, ...name.split('/'));
        if (known[name] === info.etag && existsSync(path)) return;
        mkdirSync(dirname(path), { recursive: true });
        await store.download(`${root}${name}`, path);
        known[name] = info.etag;
        downloaded += 1;
        bytes += info.size;
      }),
    ),
  );
  let removed = 0;
  for (const name of localFiles(dir)) {
    if (remote.has(name)) continue;
    rmSync(join(dir, ...name.split('/')), { force: true });
    delete known[name];
    removed += 1;
  }
  writeFileSync(indexPath, JSON.stringify(known));
  return { dir, files: remote.size, downloaded, removed, bytes };
}

/** The Parquet files of one table in a local folder (none: the table is empty). */
export function tableFiles(dir: string, table: string): string[] {
  return localFiles(join(dir, table));
}
