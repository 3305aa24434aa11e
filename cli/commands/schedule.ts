/**
 * `callpipe schedule`: the nightly Temporal Schedule (create or update), and list / pause / resume /
 * trigger / delete of callpipe's schedules.
 *
 * Policies, set explicitly: overlap BUFFER_ONE (a night that starts while the previous night's batch
 * still runs waits for it instead of being dropped or running beside it; its day still comes from its
 * own scheduled time), and a catch-up window (default 1 day: after an outage of the server, the missed
 * night is run once it is back, older ones are not).
 */
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleOptions,
} from '@temporalio/client';
import { CliError, parseCommandArgs, warnDeprecated } from '../command.ts';
import { connectPipeline, type PipelineClient } from '../stack-client.ts';
import { callSpec, outputLocation } from '../submit.ts';
import { parseS3Url } from '../../activities/storage/object-store.ts';
import { taskQueues } from '../../schemas/config.ts';
import { backfillInputSchema } from '../../schemas/backfill.ts';
import { templateProblem } from '../../workflows/nightly-date.ts';
import { nightlyBackfill, type NightlyInput } from '../../workflows/nightly.ts';
import { storeCallFiles } from '../call-files.ts';
import { RECOGNITION_OPTION, recognitionFlag, recognitionHelp } from '../recognition-flag.ts';
import type { RecognitionMode } from '../../schemas/recognition.ts';
import { callPlacesOf } from '../calls-asked.ts';
import { retention, type RetentionWorkflowInput } from '../../workflows/retention.ts';

export const summary =
  'creates or updates the nightly backfill Schedule; list, pause, resume, trigger, delete';
export const help = `Usage:
  callpipe schedule nightly --cron "<expr>" --source <template> [--out s3://…] [--time-zone Z] [--id name]
                            [--concurrency N] [--days-back N] [--catchup-window 1d] [--rules file] [--dictionary file]
                            [--recognition stream|file|auto]
  callpipe schedule retention [--cron "<expr>"] [--time-zone Z] [--id name] [--out s3://…]
  callpipe schedule list [--json]
  callpipe schedule pause <id> [--note text]
  callpipe schedule resume <id>
  callpipe schedule trigger <id>
  callpipe schedule delete <id>

nightly: creates the Schedule, or updates it when it exists. Each action runs the backfill of the day
before the action's time (in --time-zone, an IANA name, default UTC; --timezone is its deprecated
spelling): --source is a template such as s3://bucket/recordings/{yyyy}/{mm}/{dd}/ ({date} is
yyyy-mm-dd). --concurrency: calls processed at once by each night's backfill (default 20). Overlap
policy: BUFFER_ONE (a night waits for the previous one); catch-up window: --catchup-window (default 1d).
Schedule id: --id (default callpipe-nightly). --rules <file>: the rule file each night's calls are scored
with (default CALLPIPE_RULES, else the shipped one), and --dictionary <file> the custom vocabulary every
session gets (default CALLPIPE_DICTIONARY), both checked and stored when the schedule is written.
${recognitionHelp(28)}

retention: creates or updates the Schedule that erases, each night (--cron, default "0 3 * * *" in
--time-zone), the calls older than CALLPIPE_RETENTION_DAYS per kind, as callpipe forget erases them
(docs/lifecycle.md). The days are stored in the schedule: run it again after changing them. Schedule id:
--id (default callpipe-retention).`;

export const DEFAULT_SCHEDULE_ID = 'callpipe-nightly';
export const RETENTION_SCHEDULE_ID = 'callpipe-retention';
const RETENTION_CRON = '0 3 * * *';

/** Create-or-update of the nightly retention Schedule (see the help); refused without retention days. */
export async function upsertRetentionSchedule(
  pc: PipelineClient,
  options: { id: string; cron: string; timeZone: string; out?: string | undefined },
): Promise<'created' | 'updated'> {
  const days = pc.config.retentionDays;
  if (!days || Object.keys(days).length === 0)
    throw new CliError('schedule retention: CALLPIPE_RETENTION_DAYS is not set: nothing would expire');
  const args: [RetentionWorkflowInput] = [
    { places: callPlacesOf(pc.config, outputLocation(options.out, pc.config)), days },
  ];
  const spec = { cronExpressions: [options.cron], timezone: options.timeZone };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: retention,
    taskQueue: taskQueues(pc.config).workflows,
    workflowId: `retention-${options.id}`,
    args,
  };
  // A night still erasing when the next begins: the next waits (it finds what the first left).
  const policies = { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '1d', pauseOnFailure: false };
  return createOrUpdate(pc, { scheduleId: options.id, spec, action, policies });
}

/** Creates the Schedule, or updates its spec, action and policies when it exists (its state is kept). */
async function createOrUpdate(pc: PipelineClient, options: ScheduleOptions): Promise<'created' | 'updated'> {
  try {
    await pc.client.schedule.create(options);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const { spec, action, policies } = options;
    await pc.client.schedule.getHandle(options.scheduleId).update((previous) => ({
      ...previous,
      spec,
      action,
      policies: { ...previous.policies, ...policies },
    }));
    return 'updated';
  }
}

export interface NightlyScheduleOptions {
  id: string;
  cron: string;
  sourceTemplate: string;
  out?: string;
  timeZone: string;
  /** Calls processed at once by each night's backfill (default: the backfill's). */
  concurrency?: number;
  daysBack?: number;
  catchupWindow: string;
  /** A rule file (checked and stored now; each night's calls are scored with it). */
  rules?: string | undefined;
  /** A custom vocabulary (checked and stored now; every night's sessions get it). */
  dictionary?: string | undefined;
  /** `--recognition`: the nights' calls' mode over the configuration's. */
  recognition?: RecognitionMode | undefined;
}

/** Create-or-update: `client.schedule.create` throws `ScheduleAlreadyRunning` when the id exists. */
export async function upsertNightlySchedule(
  pc: PipelineClient,
  options: NightlyScheduleOptions,
): Promise<'created' | 'updated'> {
  const problem = templateProblem(options.sourceTemplate);
  if (problem) throw new CliError(`schedule nightly: --source ${problem}`);
  const output = outputLocation(options.out, pc.config);
  const files = await storeCallFiles(pc.store, pc.config, {
    rules: options.rules,
    dictionary: options.dictionary,
  });
  // Defaults are filled here, so the workflows need no schema code; the batch id and source are the night's.
  const {
    batchId: _b,
    source: _s,
    ...backfill
  } = backfillInputSchema.parse({
    batchId: 'template',
    source: { kind: 'prefix', bucket: 'template', prefix: '' },
    output,
    spec: callSpec(pc.config, output, files, options.recognition),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });
  const args: [NightlyInput] = [
    {
      scheduleId: options.id,
      sourceTemplate: options.sourceTemplate,
      timeZone: options.timeZone,
      daysBack: options.daysBack ?? 1,
      backfill,
    },
  ];
  const spec = { cronExpressions: [options.cron], timezone: options.timeZone };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: nightlyBackfill,
    taskQueue: taskQueues(pc.config).workflows,
    // The server appends the action's time to this id.
    workflowId: `nightly-${options.id}`,
    args,
  };
  const policies = {
    overlap: ScheduleOverlapPolicy.BUFFER_ONE,
    catchupWindow: options.catchupWindow,
    pauseOnFailure: false,
  };
  return createOrUpdate(pc, { scheduleId: options.id, spec, action, policies });
}

function cronValid(expr: string): boolean {
  // 5 fields (or 6 with seconds), or an @-macro; the server validates the rest.
  return (
    /^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$/.test(expr) ||
    /^\S+(\s+\S+){4,5}$/.test(expr.trim())
  );
}

async function withSchedule<T>(id: string | undefined, work: (id: string) => Promise<T>): Promise<T> {
  if (!id) throw new CliError('schedule: give the schedule id');
  try {
    return await work(id);
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new CliError(`no such schedule: ${id}`, 1);
    throw err;
  }
}

type ScheduleValues = ReturnType<typeof parseScheduleArgs>['values'];

function parseScheduleArgs(argv: string[]) {
  return parseCommandArgs('schedule', argv, {
    cron: { type: 'string' },
    source: { type: 'string' },
    out: { type: 'string' },
    'time-zone': { type: 'string' },
    timezone: { type: 'string' },
    id: { type: 'string', default: DEFAULT_SCHEDULE_ID },
    concurrency: { type: 'string' },
    'days-back': { type: 'string' },
    'catchup-window': { type: 'string', default: '1d' },
    note: { type: 'string' },
    json: { type: 'boolean', default: false },
    rules: { type: 'string' },
    dictionary: { type: 'string' },
    ...RECOGNITION_OPTION,
  });
}

/** `--time-zone`, or its deprecated spelling `--timezone` (with a notice); default UTC. */
function timeZoneOf(values: ScheduleValues): string {
  if (values.timezone !== undefined) {
    if (values['time-zone'] !== undefined)
      throw new CliError('schedule: give --time-zone once (--timezone is its deprecated spelling)');
    warnDeprecated('schedule', '--timezone', 'use --time-zone (the spelling of the temporal CLI)');
  }
  return values['time-zone'] ?? values.timezone ?? 'UTC';
}

/** The options of `schedule nightly`, checked before connecting. */
function nightlyOptions(values: ScheduleValues, timeZone: string): NightlyScheduleOptions {
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (!values.cron || !cronValid(values.cron))
    throw new CliError('schedule nightly: --cron "<min hour dom mon dow>" is required');
  if (!values.source)
    throw new CliError('schedule nightly: --source s3://bucket/…/{yyyy}/{mm}/{dd}/ is required');
  if (values.out && !parseS3Url(values.out))
    throw new CliError('schedule nightly: --out must be s3://bucket/prefix');
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw new CliError(`schedule nightly: unknown time zone '${timeZone}'`);
  }
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency > 0))
    throw new CliError('schedule nightly: --concurrency must be a positive integer');
  return {
    id: values.id,
    cron: values.cron,
    sourceTemplate: values.source,
    out: values.out,
    timeZone,
    concurrency,
    daysBack: values['days-back'] ? Number(values['days-back']) : undefined,
    catchupWindow: values['catchup-window'],
    rules: values.rules,
    dictionary: values.dictionary,
    recognition: recognitionFlag('schedule nightly', values.recognition),
  };
}

async function listSchedules(pc: PipelineClient, json: boolean): Promise<void> {
  const rows: { id: string; paused: boolean; next?: string; workflowType?: string; note?: string }[] = [];
  for await (const s of pc.client.schedule.list()) {
    rows.push({
      id: s.scheduleId,
      paused: s.state.paused,
      next: s.info.nextActionTimes[0]?.toISOString(),
      workflowType: s.action?.workflowType,
      note: s.state.note,
    });
  }
  if (json) console.log(JSON.stringify(rows));
  else if (rows.length === 0) console.log('no schedules');
  else
    for (const r of rows)
      console.log(
        `${r.id.padEnd(24)} ${r.paused ? 'paused ' : 'active '} next ${r.next ?? '—'}  ${r.workflowType ?? ''}`,
      );
}

/** pause, resume, trigger, delete: one call on the schedule's handle, and the line saying it was done. */
async function actOnSchedule(pc: PipelineClient, sub: string, id: string | undefined, note?: string) {
  const act: Record<string, [(s: string) => Promise<unknown>, string]> = {
    pause: [
      (s) => pc.client.schedule.getHandle(s).pause(note ?? 'paused with callpipe schedule pause'),
      'paused',
    ],
    resume: [
      (s) => pc.client.schedule.getHandle(s).unpause('resumed with callpipe schedule resume'),
      'resumed',
    ],
    // A manual run now, even if a night is running (it is a different day, or attaches to nothing).
    trigger: [(s) => pc.client.schedule.getHandle(s).trigger(ScheduleOverlapPolicy.ALLOW_ALL), 'triggered'],
    delete: [(s) => pc.client.schedule.getHandle(s).delete(), 'deleted'],
  };
  const [work, done] = act[sub]!;
  await withSchedule(id, work);
  console.log(`schedule ${id} ${done}`);
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseScheduleArgs(rest);
  if (!sub || !['nightly', 'retention', 'list', 'pause', 'resume', 'trigger', 'delete'].includes(sub)) {
    throw new CliError(
      'schedule: nightly | retention | list | pause | resume | trigger | delete (see --help)',
    );
  }
  const timeZone = timeZoneOf(values);
  const nightly = sub === 'nightly' ? nightlyOptions(values, timeZone) : undefined;
  const pc = await connectPipeline();
  try {
    if (sub === 'retention') {
      if (values.cron !== undefined && !cronValid(values.cron))
        throw new CliError('schedule retention: --cron "<min hour dom mon dow>" is not a cron expression');
      const id = values.id === DEFAULT_SCHEDULE_ID ? RETENTION_SCHEDULE_ID : values.id;
      const cron = values.cron ?? RETENTION_CRON;
      const outcome = await upsertRetentionSchedule(pc, { id, cron, timeZone, out: values.out });
      if (values.json) console.log(JSON.stringify({ scheduleId: id, outcome }));
      else
        console.log(
          `schedule ${id} ${outcome}: ${cron} (${timeZone}) erases calls past CALLPIPE_RETENTION_DAYS`,
        );
    } else if (nightly) {
      const outcome = await upsertNightlySchedule(pc, nightly);
      if (values.json) console.log(JSON.stringify({ scheduleId: values.id, outcome }));
      else console.log(`schedule ${values.id} ${outcome}: ${values.cron} (${timeZone}) → ${values.source}`);
    } else if (sub === 'list') await listSchedules(pc, values.json);
    else await actOnSchedule(pc, sub, positionals[0], values.note);
    return 0;
  } finally {
    await pc.close();
  }
}
