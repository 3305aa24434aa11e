/**
 * The analysis tables' activities (schemas/tables.ts for the columns):
 *
 * - `writeCallTables`, once a call's result.json is written: the call's rows go into a file of their
 *   own in the day's partition (`call-<callId>.parquet`, replaced by a re-run), and any older rows of
 *   the call elsewhere (another day after its date changed, a compacted part) are removed, so the call
 *   has exactly one set of rows in each table.
 * - `compactTables`, at the end of a batch: each day the batch touched is rewritten as a few parts
 *   (one per {@link TABLE_PART_MAX_ROWS} rows), keeping the newest version of each call, so a partition
 *   is not one tiny file per call forever.
 *
 * Where each call's rows are is kept in a small locator object per call (`<tables>_callpipe/calls/`),
 * and every change of a day's files holds that day's lease (partition-lease.ts), so a write and a
 * compaction of the same day never interleave. Both activities are idempotent: a retry after a crash
 * at any step converges to the same rows.
 */
import { onBucket, type ObjectStore } from '../storage/object-store.ts';
import type { CallIdMode } from '../../schemas/config.ts';
import { activityContext } from '../activity-context.ts';
import type { LeaseOptions } from './partition-lease.ts';
import { writeCallTables, type WriteCallTablesInput } from './write-call-tables.ts';
import { compactTables, type CompactTablesInput } from './compact-tables.ts';

export type { WriteCallTablesInput } from './write-call-tables.ts';
export type { CompactTablesInput } from './compact-tables.ts';

export interface TableActivityDeps {
  store: ObjectStore;
  /** Lease timings (tests shorten them). */
  lease?: Pick<LeaseOptions, 'ttlMs' | 'waitMs'>;
  /** The call id rule (config `callIds`): how the rows show a recording's key (rows.ts); default auto. */
  callIds?: CallIdMode;
}

function heartbeat(details?: unknown): void {
  activityContext()?.heartbeat(details);
}

export function createTableActivities({ store, lease, callIds }: TableActivityDeps) {
  const on = (bucket: string) => onBucket(store, bucket);
  const leaseOptions = (what: string): LeaseOptions => ({ ...lease, what, onWait: () => heartbeat() });

  return {
    /** The call's rows in every table, replacing any older version of them (see the file's comment). */
    writeCallTables: (input: WriteCallTablesInput) =>
      writeCallTables(on(input.tables.bucket), on(input.result.bucket), input, leaseOptions, callIds),

    /** Each day's partitions rewritten as a few parts, the newest version of every call kept. */
    compactTables: (input: CompactTablesInput) =>
      compactTables(on(input.tables.bucket), input, leaseOptions, heartbeat),
  };
}

export type TableActivities = ReturnType<typeof createTableActivities>;
