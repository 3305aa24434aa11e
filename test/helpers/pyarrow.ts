/**
 * The independent reader of the analysis tables in tests: pyarrow (PyPI, pinned in
 * cli/tools/provision.ts TEST_PINNED, installed into .tools/venv by the test bootstrap), never the
 * writer's own library. Reads every *.parquet under each table's folder, locally or straight from S3.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureTools } from '../../cli/tools/provision.ts';
import type { S3Config } from '../../schemas/config.ts';

const SCRIPT = fileURLToPath(new URL('./read_tables.py', import.meta.url));

export interface PyarrowTable {
  /** Per file (relative to the tables root): rows, compression codecs, the table and schema version it names. */
  files: Record<string, { rows: number; codecs: string[]; table: string; schema_version: string }>;
  /** Column → Arrow type, as pyarrow reads it (with `dt` from the Hive partition). */
  schema: Record<string, string>;
  rows: Record<string, unknown>[];
}

function read(spec: unknown): Record<string, PyarrowTable> {
  const { python } = ensureTools({ test: true });
  const out = execFileSync(python!, [SCRIPT, JSON.stringify(spec)], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(out) as Record<string, PyarrowTable>;
}

export function readLocalTables(root: string, tables: string[]): Record<string, PyarrowTable> {
  return read({ root, tables });
}

export function readS3Tables(
  s3: S3Config,
  location: { bucket: string; prefix: string },
  tables: string[],
): Record<string, PyarrowTable> {
  const endpoint = new URL(s3.endpoint!);
  return read({
    s3: {
      endpoint: endpoint.host,
      scheme: endpoint.protocol.replace(':', ''),
      region: s3.region,
      access_key: s3.accessKeyId,
      secret_key: s3.secretAccessKey,
      bucket: location.bucket,
      prefix: location.prefix,
    },
    tables,
  });
}
