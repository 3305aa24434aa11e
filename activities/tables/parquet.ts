/**
 * The one module that reads and writes Parquet (hyparquet-writer and hyparquet, pure JavaScript):
 * rows of a table of schemas/tables.ts in, a Snappy-compressed Parquet file out, and back.
 *
 * Why these (compared on this machine, 2 cores, 200,000 utterance rows of 7 columns, one run, each file
 * read back by pyarrow): hyparquet-writer 0.17 wrote them in 0.61 s (3.9 MB); parquet-wasm 0.8 with
 * apache-arrow 1.20 s (4.5 MB; 15 MB of WebAssembly, and rows must become Arrow tables first);
 * @dsnp/parquetjs 1.8 2.46 s (13.3 MB; a dozen dependencies including an AWS SDK and a file-system
 * emulator, and its 1.9.3 package on the registry ships without its `dist/`); DuckDB's node bindings
 * 0.34 s (4.0 MB) but 68 MB of native code per platform, an SQL engine in every worker. hyparquet-writer
 * is about 1 MB with its reader, has no native code and no dependency beyond that reader, ships types,
 * writes nested lists, structs and maps, and is released often. DuckDB stays for `callpipe query`.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import type { SchemaElement } from 'hyparquet';
import {
  TABLES_SCHEMA_VERSION,
  type ColumnDef,
  type StructField,
  type TableDef,
  type TableRow,
} from '../../schemas/tables.ts';

const WRITER = 'callpipe';

type Leaf = 'string' | 'int32' | 'int64' | 'double' | 'boolean' | 'timestamp';

function leafElement(name: string, type: Leaf, required: boolean): SchemaElement {
  const repetition_type = required ? 'REQUIRED' : 'OPTIONAL';
  switch (type) {
    case 'string':
      return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type };
    case 'int32':
      return { name, type: 'INT32', repetition_type };
    case 'int64':
      return { name, type: 'INT64', repetition_type };
    case 'double':
      return { name, type: 'DOUBLE', repetition_type };
    case 'boolean':
      return { name, type: 'BOOLEAN', repetition_type };
    case 'timestamp':
      return {
        name,
        type: 'INT64',
        repetition_type,
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      };
  }
}

/** A column's schema elements, in Parquet's depth-first order (lists and maps in the standard 3-level form). */
function columnElements(c: ColumnDef): SchemaElement[] {
  const repetition_type = c.required ? 'REQUIRED' : 'OPTIONAL';
  const t = c.type;
  if (typeof t === 'string') return [leafElement(c.name, t, !!c.required)];
  if ('list' in t) {
    return [
      { name: c.name, repetition_type, converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      leafElement('element', t.list, true),
    ];
  }
  if ('map' in t) {
    return [
      { name: c.name, repetition_type, converted_type: 'MAP', num_children: 1 },
      { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
      leafElement('key', 'string', true),
      leafElement('value', t.map, false),
    ];
  }
  const fields: readonly StructField[] = t.listOf;
  return [
    { name: c.name, repetition_type, converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'REQUIRED', num_children: fields.length },
    ...fields.map((f) => leafElement(f.name, f.type, !!f.required)),
  ];
}

/** The value as the writer takes it: maps as key/value entries; absent is null. */
function toWriter(c: ColumnDef, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof c.type === 'object' && 'map' in c.type) {
    return Object.entries(value as Record<string, unknown>).map(([key, v]) => ({ key, value: v ?? null }));
  }
  return value;
}

/** The value as rows carry it: bigint timestamps as Dates, absent lists and maps as null. */
function fromReader(c: ColumnDef, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (c.type === 'timestamp' && !(value instanceof Date)) return new Date(Number(value));
  if (c.type === 'int64' && typeof value === 'bigint') return Number(value);
  return value;
}

class TableRowError extends Error {
  override name = 'InvalidResultDocument';
}

/** Rows of `table` as one Parquet file (Snappy), with the table and schema version in its key-value metadata. */
export function encodeTable(table: TableDef, rows: readonly TableRow[]): Buffer {
  for (const c of table.columns) {
    if (!c.required) continue;
    const at = rows.findIndex((r) => r[c.name] === undefined || r[c.name] === null);
    if (at >= 0) throw new TableRowError(`${table.name}.${c.name} is required but row ${at} has none`);
  }
  const schema: SchemaElement[] = [
    { name: 'root', num_children: table.columns.length },
    ...table.columns.flatMap(columnElements),
  ];
  const buffer = parquetWriteBuffer({
    schema,
    columnData: table.columns.map((c) => ({ name: c.name, data: rows.map((r) => toWriter(c, r[c.name])) })),
    codec: 'SNAPPY',
    createdBy: WRITER,
    kvMetadata: [
      { key: 'callpipe.table', value: table.name },
      { key: 'callpipe.schema_version', value: String(TABLES_SCHEMA_VERSION) },
    ],
  });
  return Buffer.from(buffer);
}

function arrayBufferOf(buffer: Buffer): ArrayBuffer {
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
}

/** The rows of a Parquet file written by {@link encodeTable} (columns the table no longer has are dropped). */
export async function decodeTable(table: TableDef, buffer: Buffer): Promise<TableRow[]> {
  const file = arrayBufferOf(buffer);
  const metadata = parquetMetadata(file);
  const present = new Set(metadata.schema.map((e) => e.name));
  const columns = table.columns.filter((c) => present.has(c.name));
  const objects = (await parquetReadObjects({
    file,
    metadata,
    columns: columns.map((c) => c.name),
  })) as Record<string, unknown>[];
  return objects.map((o) => {
    const row: TableRow = {};
    for (const c of table.columns) row[c.name] = fromReader(c, o[c.name]);
    return row;
  });
}

/** The table a file says it belongs to and its schema version (key-value metadata). */
export function parquetFileInfo(buffer: Buffer): { table?: string; schemaVersion?: number; rows: number } {
  const metadata = parquetMetadata(arrayBufferOf(buffer));
  const kv = new Map((metadata.key_value_metadata ?? []).map((e) => [e.key, e.value]));
  const version = kv.get('callpipe.schema_version');
  return {
    table: kv.get('callpipe.table') ?? undefined,
    schemaVersion: version ? Number(version) : undefined,
    rows: Number(metadata.num_rows),
  };
}
