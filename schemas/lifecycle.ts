/**
 * A call's life after processing: what callpipe holds about it by kind (activities/lifecycle/
 * call-objects.ts lists it), the erasure requests of `callpipe forget` and of retention, their audit
 * records, and how long each kind is kept (`CALLPIPE_RETENTION_DAYS`).
 *
 * Pure (zod only): the workflows import the types and the CLI and the configuration the schemas.
 */
import { z } from 'zod';

/**
 * Kinds of a call's own objects: `results` (result.json, transcript.vtt, error.json, the call page),
 * `redacted-audio`, `unredacted` (the unredacted copies), `staging` (intermediates of every run),
 * `table-file` (the call's own Parquet files), `index` (its tables locator), `recording` (the source,
 * only when asked for).
 */
const CALL_OBJECT_KINDS = [
  'results',
  'redacted-audio',
  'unredacted',
  'staging',
  /** The call's events and its deliveries given up (`<output>events/<day>/<callId>/`, `events/failed/`). */
  'events',
  'table-file',
  'index',
  'recording',
] as const;
export type CallObjectKind = (typeof CALL_OBJECT_KINDS)[number];

// --- retention ---------------------------------------------------------------------------------------

/**
 * What retention expires, each after its own number of days from the call's day (its tables partition:
 * when it started): `results` is the whole call as `forget` erases it (results, pages, table rows, report
 * lines, workflow histories, and every kind below); the others only their own objects; `recordings` only
 * when named (the recordings are the call center's, not callpipe's).
 */
export const RETENTION_KINDS = ['results', 'unredacted', 'redacted-audio', 'staging', 'recordings'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];
export type RetentionDays = Partial<Record<RetentionKind, number>>;

const RETENTION_SYNTAX =
  'a number of days for results, unredacted copies, redacted audio and staging (e.g. 365), or kind=days ' +
  `pairs separated by commas (e.g. results=365,unredacted=30,staging=7); kinds: ${RETENTION_KINDS.join(', ')} ` +
  '(recordings only when named)';

/**
 * `CALLPIPE_RETENTION_DAYS`: `N` (every kind but recordings) or `kind=N,kind=N…`. Days are whole, 1 or
 * more: a typo must never mean "erase everything now".
 */
export function parseRetentionDays(text: string): RetentionDays | string {
  const spec = text.trim();
  if (/^\d+$/.test(spec)) {
    const n = Number(spec);
    if (n < 1) return `retention of ${spec} days: at least 1 (${RETENTION_SYNTAX})`;
    return { results: n, unredacted: n, 'redacted-audio': n, staging: n };
  }
  const days: RetentionDays = {};
  for (const part of spec.split(',')) {
    const m = /^\s*([a-z-]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m)
      return `retention ${JSON.stringify(part.trim().slice(0, 40))} is not kind=days (${RETENTION_SYNTAX})`;
    const [, kind, n] = m as unknown as [string, string, string];
    if (!(RETENTION_KINDS as readonly string[]).includes(kind))
      return `unknown retention kind '${kind}' (${RETENTION_SYNTAX})`;
    if (days[kind as RetentionKind] !== undefined) return `retention kind '${kind}' given twice`;
    if (Number(n) < 1) return `retention of ${kind}: at least 1 day, got ${n}`;
    days[kind as RetentionKind] = Number(n);
  }
  // A recording is found through its call's result: once results expire, nothing leads to it any more.
  if (days.recordings !== undefined && days.results !== undefined && days.recordings > days.results)
    return `retention of recordings (${days.recordings} days) must not outlast results (${days.results} days): callpipe finds a recording through its result; keep recordings longer with the bucket's own lifecycle rules`;
  return days;
}

/** The configuration's field: the variable's text, checked and parsed when the configuration loads. */
export const retentionDaysSchema = z
  .preprocess(
    // A config file may give the kinds as an object: the same text, checked the same way.
    (v) =>
      v !== null && typeof v === 'object'
        ? Object.entries(v)
            .map(([k, n]) => `${k}=${String(n)}`)
            .join(',')
        : typeof v === 'number'
          ? String(v)
          : v,
    z.string(),
  )
  .transform((text, ctx) => {
    const parsed = parseRetentionDays(text);
    if (typeof parsed === 'string') {
      ctx.addIssue({ code: 'custom', message: parsed });
      return z.NEVER;
    }
    return parsed;
  });

/** Days before `now` (UTC) a call's day must be to be older than `days` days: calls of days `< cutoff`. */
export function retentionCutoff(now: Date, days: number): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}

// --- requests and audit ------------------------------------------------------------------------------

/** Where a deployment's calls are (every place `forget` looks), as the workflow is given it. */
const callPlacesSchema = z.object({
  output: z.object({ bucket: z.string().min(1), prefix: z.string() }),
  stagingPrefix: z.string(),
  unredacted: z.object({ bucket: z.string().min(1), prefix: z.string() }).optional(),
  tables: z.object({ bucket: z.string().min(1), prefix: z.string(), timeZone: z.string() }),
});

/** An erasure: of whole calls (`forget`, retention of results) or of some kinds of their objects. */
export const forgetInputSchema = z.object({
  /** Derived from the request (the calls, the options): names the workflow and the audit record. */
  requestId: z.string().regex(/^[a-z][a-z-]{7,80}$/),
  callIds: z.array(z.string().min(1)).min(1),
  places: callPlacesSchema,
  /** Also the source recordings. */
  recordings: z.boolean().default(false),
  /** Only these kinds of objects (retention of one kind); absent: the whole call. */
  onlyKinds: z.array(z.enum(CALL_OBJECT_KINDS)).optional(),
  /** `forget` or `retention`: said in the audit record. */
  reason: z.enum(['forget', 'retention']).default('forget'),
});
export type ForgetInput = z.infer<typeof forgetInputSchema>;

/** What was removed of one call: counts by kind, never a value (keys are call-id based). */
export interface ForgottenCall {
  callId: string;
  objects: Partial<Record<CallObjectKind, number>>;
  tableRows: Record<string, number>;
  reportsRewritten: number;
  workflowExecutions: number;
}

export interface AuditRecord {
  requestId: string;
  reason: 'forget' | 'retention';
  at: string;
  recordings: boolean;
  onlyKinds?: CallObjectKind[];
  calls: ForgottenCall[];
  totals: {
    calls: number;
    objects: number;
    tableRows: number;
    reportsRewritten: number;
    workflowExecutions: number;
  };
  /** Verified by listing and reading back: nothing of the calls remains. */
  verified: boolean;
}

/** Where audit records go: `audit/<reason>/<requestId>.json` at the root of the output bucket. */
const AUDIT_PREFIX = 'audit/';

export function auditKey(reason: 'forget' | 'retention' | 'export', requestId: string): string {
  return `${AUDIT_PREFIX}${reason}/${requestId}.json`;
}

/**
 * A request id from what it asks, in letters only (a hash in hex holds digit runs, which the personal-data
 * rules rightly read as numbers): the same request is the same id, so a repeat finds the first one.
 */
export function lettersOfHex(hex: string): string {
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
}
