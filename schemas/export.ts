/**
 * A disclosure request's documents (`callpipe export`, activities/lifecycle/export-calls.ts): the
 * manifest written with the exported files, and the audit record kept under the audit prefix
 * (schemas/lifecycle.ts). The manifest is the requester's: it names where each file came from. The
 * audit record is the deployment's: call ids (pseudonymous), counts and a hash of the manifest, never a
 * key, a value or where the export went beyond its kind.
 */
import { z } from 'zod';

/** What an exported file is. */
const EXPORTED_KINDS = [
  'results',
  'redacted-audio',
  'table-rows',
  'events',
  'recording',
  'unredacted',
] as const;
export type ExportedKind = (typeof EXPORTED_KINDS)[number];

const exportedFileSchema = z.object({
  /** Path inside the export, `/`-separated: `<callId>/result.json`. */
  path: z.string(),
  kind: z.enum(EXPORTED_KINDS),
  /** Where it came from, `s3://bucket/key`; for table rows every file that held a row of the call. */
  from: z.array(z.string()),
  size: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ExportedFile = z.infer<typeof exportedFileSchema>;

const exportedCallSchema = z.object({
  callId: z.string(),
  files: z.array(exportedFileSchema),
  /** Held but not exported, by kind, with why (staging, bookkeeping, what was not asked for). */
  notExported: z.array(z.object({ kind: z.string(), objects: z.number().int(), reason: z.string() })),
});
export type ExportedCall = z.infer<typeof exportedCallSchema>;

const optionsSchema = z.object({ recordings: z.boolean(), unredacted: z.boolean() });

/** `manifest.json` of an export. */
export const exportManifestSchema = z.object({
  requestId: z.string(),
  exportedAt: z.string(),
  options: optionsSchema,
  calls: z.array(exportedCallSchema),
  totals: z.object({ calls: z.number().int(), files: z.number().int(), bytes: z.number().int() }),
});
export type ExportManifest = z.infer<typeof exportManifestSchema>;

/** The audit record of an export: `audit/export/<requestId>.json` (schemas/lifecycle.ts auditKey). */
export const exportAuditRecordSchema = z.object({
  requestId: z.string(),
  reason: z.literal('export'),
  at: z.string(),
  calls: z.array(z.string()),
  options: optionsSchema,
  counts: z.object({
    calls: z.number().int(),
    files: z.number().int(),
    bytes: z.number().int(),
    byKind: z.partialRecord(
      z.enum(EXPORTED_KINDS),
      z.object({ files: z.number().int(), bytes: z.number().int() }),
    ),
  }),
  /** `local folder` or `s3://<bucket>/`: the kind of place, never a path a requester's name may be in. */
  destination: z.string(),
  /** SHA-256 of the export's manifest.json, to check a copy of the export against the record. */
  manifestSha256: z.string(),
});
export type ExportAuditRecord = z.infer<typeof exportAuditRecordSchema>;
