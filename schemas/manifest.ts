/**
 * A backfill manifest: a CSV with a header row, one recording per row.
 *
 * | column            | meaning                                                                       |
 * | ----------------- | ----------------------------------------------------------------------------- |
 * | `uri` or `key`    | required: `s3://bucket/key`, or a key in the manifest's bucket (or `bucket`)  |
 * | `bucket`          | bucket of `key` (default: the manifest's)                                     |
 * | `call_id`         | the call's id (names its output folder); default derived from bucket + key   |
 * | `agent`           | agent id or name                                                              |
 * | `direction`       | `inbound` or `outbound`                                                       |
 * | `line`            | the phone line, queue or number the call came in on (the night report's quality per line) |
 * | `started_at`      | when the call started (ISO 8601); the date filters use it                     |
 * | `channels`        | channel → speaker mapping, in channel order: `agent,customer` or `customer|agent` |
 *
 * Every column but `uri`/`key`/`bucket` travels into the result's `source.metadata` (other columns too,
 * so a team's own fields such as `queue` or `ticket` reach the results without code changes).
 */
import { z } from 'zod';

/**
 * How large a manifest may be, checked before a batch starts (by the command on a local file, and by the
 * batch's first step on an object), and while it is read, so a file is never read whole into memory
 * first. Far above what teams run (manifests of 100,000 rows, a few hundred bytes each); beyond them,
 * a manifest is split into several batches. docs/input-limits.md states them.
 */
export const MANIFEST_LIMITS = {
  maxBytes: 256 * 1024 * 1024,
  maxRows: 500_000,
} as const;
export type ManifestLimits = { maxBytes: number; maxRows: number };

const callIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "letters, digits, '.', '_' and '-' only")
  .refine((v) => !v.includes('..'), 'must not contain ..');

export const manifestRowSchema = z
  .object({
    uri: z
      .string()
      .regex(/^s3:\/\/[^/]+\/.+/, 'must be s3://bucket/key')
      .optional(),
    key: z.string().min(1).optional(),
    bucket: z.string().min(1).optional(),
    call_id: callIdSchema.optional(),
    agent: z.string().optional(),
    direction: z.enum(['inbound', 'outbound']).optional(),
    started_at: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
    channels: z
      .string()
      .regex(/^[^,|]+([,|][^,|]+)*$/, 'speakers separated by , or |')
      .optional(),
  })
  .catchall(z.string())
  .refine((row) => row.uri !== undefined || row.key !== undefined, 'needs a uri or a key column value');

/** A manifest row, resolved: where the recording is, and what travels with it. */
export const manifestEntrySchema = z.object({
  /** 1-based line of the row in the CSV (the header is line 1), for error messages. */
  line: z.number().int().positive(),
  bucket: z.string().min(1),
  key: z.string().min(1),
  callId: z.string().optional(),
  startedAt: z.string().optional(),
  speakers: z.array(z.string().min(1)).optional(),
  metadata: z.record(z.string(), z.string()),
  /**
   * Line of an earlier row with the same recording, call id and cells: this row is reported as a
   * duplicate, not run (a row that differs from it is refused with the manifest).
   */
  duplicateOf: z.number().int().positive().optional(),
  /**
   * A stored page's rows in the manifest, in bytes: the header's end, and where the page's rows start and
   * end. A page of rows with metadata is stored without it (the cells may be personal data) and the cells
   * are read back from the manifest itself; absent on pages without metadata and on older pages.
   */
  span: z
    .object({
      header: z.number().int().positive(),
      start: z.number().int().nonnegative(),
      end: z.number().int().positive(),
    })
    .optional(),
});
export type ManifestEntry = z.infer<typeof manifestEntrySchema>;
