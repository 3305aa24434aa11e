/**
 * The one module that reads CSV (csv-parse): a backfill manifest's bytes → resolved entries, validated
 * whole before anything starts (schemas/manifest.ts describes the columns). The file is read as a
 * stream within its bounds of bytes and rows; every problem is named by its line (up to
 * {@link MAX_LISTED_PROBLEMS} of them, the rest counted), and one problem refuses the whole file:
 *
 * - a header that is missing, names no `uri`/`key` column, or gives a column twice (`uri,uri`: one of
 *   them would be dropped);
 * - a header and no rows (a batch of nothing is a mistake, not a success);
 * - a row that is not valid CSV, has another number of cells than the header, or a bad cell;
 * - a call id claimed by two different recordings (the second result.json would overwrite the first),
 *   one recording under two call ids (it would be recognized, and paid for, twice), or a recording
 *   repeated with its call id but other cells (one row's values would be lost).
 *
 * A row repeating an earlier row exactly (same recording, call id and cells) is harmless: it is marked
 * `duplicateOf` that line, processed once, and reported as a duplicate.
 *
 * Messages name lines and columns, never cell values: they reach workflow histories.
 */
import { Readable } from 'node:stream';
import { parse, type CsvError, type Info } from 'csv-parse';
import {
  MANIFEST_LIMITS,
  manifestRowSchema,
  type ManifestEntry,
  type ManifestLimits,
} from '../../schemas/manifest.ts';
import { callIdOf, givenCallIdProblem, type CallIdRule } from '../storage/call-id.ts';
import { fingerprint, FingerprintTable } from './fingerprint-table.ts';

/** Problems named one by one in a refusal; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 20;

/** A manifest refused: its problems (each `line N…: why`), the first {@link MAX_LISTED_PROBLEMS} of `total`. */
export class ManifestError extends Error {
  override name = 'ManifestError';
  readonly problems: string[];
  readonly total: number;
  constructor(problems: string[], total = problems.length) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const more = total > listed.length ? `\n  … and ${total - listed.length} more` : '';
    super(
      total === 1
        ? `manifest refused: ${listed[0]}`
        : `manifest refused, ${total} problems:\n  ${listed.join('\n  ')}${more}`,
    );
    this.problems = listed;
    this.total = total;
  }
}

/** A manifest larger than its bound: by its size before it is read, or (size unknown) as it is read. */
export function tooLargeManifest(
  bytes: number | undefined,
  maxBytes: number = MANIFEST_LIMITS.maxBytes,
): ManifestError {
  const size = bytes === undefined ? '' : ` ${bytes.toLocaleString('en-US')} bytes,`;
  return new ManifestError([
    `the manifest is${size} larger than the ${maxBytes.toLocaleString('en-US')} bytes a manifest may have: split it into several`,
  ]);
}

const S3_URI = /^s3:\/\/([^/]+)\/(.+)$/;

/** Speakers of a `channels` cell: `agent,customer` or `customer|agent`. */
export function parseChannelMapping(cell: string): string[] {
  return cell
    .split(/[,|]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A header cell as a column name: `Call ID` and `call-id` are `call_id`. */
const columnName = (h: string) =>
  h
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/** A column as a message may name it: a name that looks like one (a header may hold data by mistake). */
const columnLabel = (name: string, index: number) =>
  /^[a-z][a-z0-9_]{0,39}$/.test(name) ? `column '${name}'` : `column ${index + 1}`;

/** Problems of the header line; the column names when there are none. */
function headerProblems(columns: string[]): string[] {
  const problems: string[] = [];
  const first = new Map<string, number>();
  columns.forEach((name, i) => {
    if (name === '') {
      problems.push(`line 1: column ${i + 1} has no name`);
      return;
    }
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, i);
    else
      problems.push(
        `line 1: ${columnLabel(name, i)} is given twice (columns ${earlier + 1} and ${i + 1}): keep one`,
      );
  });
  if (!columns.includes('uri') && !columns.includes('key'))
    problems.push("line 1: the header needs a 'uri' (s3://bucket/key) or a 'key' column");
  return problems;
}

/** A growable column of numbers, one per accepted row: a manifest's rows cost bytes, not objects. */
class NumberColumn {
  private values = new Float64Array(1024);

  get(i: number): number {
    return this.values[i]!;
  }

  set(i: number, value: number): void {
    if (i >= this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[i] = value;
  }
}

/**
 * A row's values beside its recording and call id, as one number: only ever compared with that of the
 * one earlier row that gave the same call id.
 */
function cellsDigest(entry: ManifestEntry): number {
  const [a, b] = fingerprint(
    JSON.stringify([entry.startedAt, entry.speakers, Object.entries(entry.metadata).sort()]),
  );
  return a * 2 ** 21 + (b >>> 11);
}

/**
 * What the file's earlier rows claimed: each call id and each recording with the first row that gave
 * it, by fingerprint (activities/backfill/fingerprint-table.ts), and each row's line and values' digest
 * in typed columns: a few numbers a row, never a row's values.
 */
class CallIds {
  /** Call id → the first row that gave it. */
  private readonly byCallId = new FingerprintTable();
  /** Recording (`bucket` and `key`) → the first row that named it. */
  private readonly byRecording = new FingerprintTable();
  private readonly lines = new NumberColumn();
  private readonly cells = new NumberColumn();
  private rows = 0;

  private readonly rule: CallIdRule;

  constructor(rule: CallIdRule) {
    this.rule = rule;
  }

  /** The problem of `entry`, or undefined (marking it a duplicate when it repeats a row exactly). */
  check(entry: ManifestEntry): string | undefined {
    const given = entry.callId === undefined ? undefined : givenCallIdProblem(entry.callId, this.rule.mode);
    if (given) return `line ${entry.line}: ${given}`;
    const callId = entry.callId ?? callIdOf({ bucket: entry.bucket, key: entry.key }, this.rule);
    const recording = `${entry.bucket}\n${entry.key}`;
    const first = this.byCallId.get(callId);
    // An accepted row's recording is registered under that row or under none (a recording met first
    // under another call id is refused), so "same recording" is "registered under the same row".
    const named = this.byRecording.get(recording);
    if (first !== undefined) {
      const line = this.lines.get(first);
      if (named !== first)
        return `line ${entry.line}: call id of line ${line}, for another recording (a call id names one call's results: give each recording its own)`;
      if (this.cells.get(first) !== cellsDigest(entry))
        return `line ${entry.line}: repeats line ${line}'s recording and call id with other values (a call has one row: keep one)`;
      entry.duplicateOf = line;
      return undefined;
    }
    if (named !== undefined)
      return `line ${entry.line}: the recording of line ${this.lines.get(named)}, under another call id (it would be recognized and paid for twice: keep one row)`;
    const row = this.rows++;
    this.byCallId.set(callId, row);
    this.byRecording.set(recording, row);
    this.lines.set(row, entry.line);
    this.cells.set(row, cellsDigest(entry));
    return undefined;
  }
}

/** A row's cells → its entry, or the problem of its line. */
function entryOf(
  cells: Record<string, string>,
  line: number,
  bucket: string,
): ManifestEntry | { problem: string } {
  const parsed = manifestRowSchema.safeParse(cells);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      problem: `line ${line}${issue.path.length ? ` (${issue.path.join('.')})` : ''}: ${issue.message}`,
    };
  }
  const row = parsed.data;
  // A `key` cell holding an s3:// URL is taken as one (manifests mix both in practice).
  const fromUri = S3_URI.exec(row.uri ?? row.key ?? '');
  const { uri: _uri, key: _key, bucket: _bucket, ...rest } = cells;
  return {
    line,
    bucket: fromUri ? fromUri[1]! : (row.bucket ?? bucket),
    key: fromUri ? fromUri[2]! : row.key!,
    callId: row.call_id,
    startedAt: row.started_at,
    speakers: row.channels ? parseChannelMapping(row.channels) : undefined,
    metadata: rest,
  };
}

/** What csv-parse refused, as a line's problem; whether the rest of the file can still be read. */
function csvProblem(
  err: CsvError,
  raw: string | undefined,
  columns: number,
): { problem: string; goOn: boolean } {
  // Where the record began: csv-parse counts the line it stopped at.
  const end = (err as CsvError & { lines?: number }).lines;
  const at = end ? `line ${end - lineBreaks(raw)}` : 'the manifest';
  switch (err.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return { problem: `${at}: not the ${columns} cells of the header`, goOn: true };
    case 'CSV_QUOTE_NOT_CLOSED':
      return { problem: `${at}: a quote opened here is never closed (the rest was not read)`, goOn: false };
    case 'CSV_INVALID_CLOSING_QUOTE':
      return {
        problem: `${at}: a quoted cell goes on after its closing quote (the rest was not read)`,
        goOn: false,
      };
    default:
      return { problem: `${at}: not valid CSV (${err.code}; the rest was not read)`, goOn: false };
  }
}

/** Bytes of `body`, refused beyond `maxBytes` as they arrive. */
async function* boundedChunks(
  body: string | Buffer | AsyncIterable<Buffer | string>,
  maxBytes: number,
): AsyncGenerator<Buffer> {
  const chunks = typeof body === 'string' || Buffer.isBuffer(body) ? [Buffer.from(body)] : body;
  let bytes = 0;
  for await (const chunk of chunks) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    bytes += buffer.length;
    if (bytes > maxBytes) throw tooLargeManifest(undefined, maxBytes);
    yield buffer;
  }
}

export interface ManifestReadOptions {
  /** Bounds other than {@link MANIFEST_LIMITS} (tests). */
  limits?: Partial<ManifestLimits>;
  /** Entries per page handed to `onPage`. */
  pageSize?: number;
  /**
   * Each page of entries, in order, while the file is valid so far (a refused file may have handed some:
   * nothing may start from them before the read resolves).
   */
  onPage?: (entries: ManifestEntry[], page: number, span: PageSpan) => Promise<void>;
  /**
   * How call ids are made from file names (config `callIds`): a given `call_id` with personal data is
   * refused unless `slug`.
   */
  callIds?: CallIdRule;
}

/** Where a page's rows are in the manifest's bytes: the header's end, the rows' start and end. */
export interface PageSpan {
  header: number;
  start: number;
  end: number;
}

/** Line breaks inside a record's raw text (not the one that ends it). */
const lineBreaks = (raw: string | undefined) => (raw ?? '').replace(/\r?\n$/, '').split('\n').length - 1;

/** The first line of a record: where it ends, less the line breaks inside it. */
const startLine = (info: Info, raw: string | undefined) => info.lines - lineBreaks(raw);

type ParsedRecord = { record: string[]; info: Info; raw?: string };

/** The first problems by line, and how many in all (csv-parse reports its own as it reads ahead). */
class ProblemList {
  total = 0;
  private readonly listed: { line: number; text: string }[] = [];
  add(text: string): void {
    this.total += 1;
    this.listed.push({ line: Number(/^line (\d+)/.exec(text)?.[1] ?? 0), text });
    this.listed.sort((a, b) => a.line - b.line);
    this.listed.length = Math.min(this.listed.length, MAX_LISTED_PROBLEMS);
  }
  texts(): string[] {
    return this.listed.map((p) => p.text);
  }
}

/** The manifest's CSV reader: records with their position and raw text; a bad record goes to `onSkip`. */
function csvParser(onSkip: (err: CsvError, raw: string | undefined) => void) {
  return parse({
    skip_empty_lines: true,
    trim: true,
    bom: true,
    relax_column_count: false,
    skip_records_with_error: true,
    info: true,
    raw: true,
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      if (err) onSkip(err, raw);
    },
  });
}

/** A record's cells by column; an empty cell means "not given". */
function cellsOf(record: string[], columns: string[]): Record<string, string> {
  const cells: Record<string, string> = {};
  record.forEach((v, i) => {
    if (v !== '') cells[columns[i]!] = v;
  });
  return cells;
}

/**
 * Reads and validates a whole manifest, handing its entries page by page; resolves to how many rows and
 * pages it has, or rejects with a {@link ManifestError} naming every problem. `bucket` is the manifest's
 * own bucket, the default of a `key` column.
 */
export async function readManifest(
  body: string | Buffer | AsyncIterable<Buffer | string>,
  bucket: string,
  options: ManifestReadOptions = {},
): Promise<{ rows: number; pages: number }> {
  const limits = { ...MANIFEST_LIMITS, ...options.limits };
  const pageSize = options.pageSize ?? 1000;
  const problems = new ProblemList();
  const problem = (text: string) => problems.add(text);
  let columns: string[] | undefined;
  let stopped = false;
  const parser = csvParser((err, raw) => {
    if (stopped) return;
    const { problem: p, goOn } = csvProblem(err, raw, columns?.length ?? 0);
    problem(p);
    if (!goOn) stopped = true;
  });
  const source = Readable.from(boundedChunks(body, limits.maxBytes));
  let readError: unknown;
  source.on('error', (err) => {
    readError = err;
    parser.destroy();
  });
  source.pipe(parser);

  const ids = new CallIds(options.callIds ?? { mode: 'auto' });
  let rows = 0;
  let pages = 0;
  let page: ManifestEntry[] = [];
  // Bytes read when each record was handed: a record starts where the one before it ended.
  let headerEnd = 0;
  let recordEnd = 0;
  let pageStart = 0;
  let pageEnd = 0;
  const flush = async () => {
    if (page.length === 0 || !options.onPage) return;
    const full = page;
    page = [];
    await options.onPage(full, pages++, { header: headerEnd, start: pageStart, end: pageEnd });
  };
  try {
    for await (const { record, info, raw } of parser as AsyncIterable<ParsedRecord>) {
      if (stopped) break;
      const recordStart = recordEnd;
      recordEnd = info.bytes;
      if (!columns) {
        headerEnd = info.bytes;
        columns = record.map(columnName);
        const header = headerProblems(columns);
        if (header.length > 0) {
          header.forEach(problem);
          break;
        }
        continue;
      }
      rows += 1;
      const line = startLine(info, raw);
      if (rows > limits.maxRows) {
        problem(
          `more than ${limits.maxRows.toLocaleString('en-US')} rows (line ${line} is row ${rows.toLocaleString('en-US')}): split the manifest into several`,
        );
        break;
      }
      const entry = entryOf(cellsOf(record, columns), line, bucket);
      if ('problem' in entry) {
        problem(entry.problem);
        continue;
      }
      const claimed = ids.check(entry);
      if (claimed) {
        problem(claimed);
        continue;
      }
      // A refused file hands no more pages; a check without a reader of pages keeps none.
      if (problems.total > 0 || !options.onPage) continue;
      if (page.length === 0) pageStart = recordStart;
      pageEnd = recordEnd;
      page.push(entry);
      if (page.length >= pageSize) await flush();
    }
  } catch (err) {
    readError ??= err;
  } finally {
    source.destroy();
    parser.destroy();
  }
  if (readError instanceof ManifestError) throw readError;
  if (readError) throw readError;
  if (!columns && problems.total === 0)
    problem('the manifest is empty: it needs a header line (a uri or key column) and a row per recording');
  else if (columns && rows === 0 && problems.total === 0)
    problem('line 1: a header and no rows: the manifest lists no recording');
  if (problems.total > 0) throw new ManifestError(problems.texts(), problems.total);
  await flush();
  return { rows, pages };
}

/** Every entry of a manifest (a small one: tests, the command's own check), validated whole. */
export async function parseManifest(
  body: string | Buffer | AsyncIterable<Buffer | string>,
  bucket: string,
  options: Omit<ManifestReadOptions, 'onPage' | 'pageSize'> = {},
): Promise<ManifestEntry[]> {
  const entries: ManifestEntry[] = [];
  await readManifest(body, bucket, {
    ...options,
    onPage: async (page) => void entries.push(...page),
  });
  return entries;
}

/** A manifest whose rows are no longer those its stored pages were made from. */
export class ManifestChangedError extends Error {
  override name = 'ManifestChangedError';
}

/**
 * A stored page's entries with their metadata read back from the manifest (ranged reads of its header
 * and of the page's rows, parsed as the batch parsed them): pages are stored without the cells, which may
 * be personal data, so nothing of them stays in the batch's objects. Entries without a span (a page
 * without metadata, or stored before) are as they are. Refuses a manifest whose rows changed meanwhile.
 */
export async function withManifestMetadata(
  entries: ManifestEntry[],
  readRange: (start: number, end: number) => Promise<Buffer>,
  bucket: string,
): Promise<ManifestEntry[]> {
  const span = entries[0]?.span;
  if (!span) return entries;
  const [head, rows] = await Promise.all([readRange(0, span.header), readRange(span.start, span.end)]);
  let read: ManifestEntry[];
  try {
    // The rows passed the deployment's call id rule when the batch read them: not refused again here.
    read = await parseManifest(Buffer.concat([head, rows]), bucket, { callIds: { mode: 'slug' } });
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    read = [];
  }
  const same = (a: ManifestEntry, b: ManifestEntry | undefined) =>
    b !== undefined &&
    a.bucket === b.bucket &&
    a.key === b.key &&
    a.callId === b.callId &&
    a.startedAt === b.startedAt;
  if (read.length !== entries.length || entries.some((e, i) => !same(e, read[i])))
    throw new ManifestChangedError(
      `the manifest changed since the batch began (lines ${entries[0]!.line}–${entries.at(-1)!.line} are not the rows it read): start a new batch`,
    );
  return entries.map(({ span: _span, ...e }, i) => ({ ...e, metadata: read[i]!.metadata }));
}
