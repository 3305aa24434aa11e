/**
 * Which calls a request about customers' data acts on (`export`, `forget`): call ids given, or the calls
 * holding one value asked with --phone, --email or --customer (found as `callpipe find` finds them), and
 * where the deployment keeps what it wrote for them.
 */
import { CliError } from './command.ts';
import { outputLocation } from './submit.ts';
import { callIdsHolding } from './commands/find.ts';
import type { CallPlaces } from '../activities/lifecycle/call-objects.ts';
import { parseS3Url, type OutputLocation } from '../schemas/call-keys.ts';
import { redactionInputOf, tablesOf } from '../schemas/call-spec.ts';
import { type Config } from '../schemas/config.ts';

const LOOKUPS = ['phone', 'email', 'customer'] as const;

/** The options every such command takes to say which calls, and where their results are. */
export const CALLS_ASKED_OPTIONS = {
  phone: { type: 'string' },
  email: { type: 'string' },
  customer: { type: 'string' },
  out: { type: 'string' },
  offline: { type: 'boolean', default: false },
} as const;

export interface CallsAsked {
  places: CallPlaces;
  /** The ids given, or those of the calls holding the value asked (none when no call holds it). */
  callIds: string[];
  /** The value asked, when calls were asked by one. */
  asked?: { kind: string; value: string };
}

/** Where a deployment keeps what it wrote for calls whose results are in `output`. */
export function callPlacesOf(config: Config, output: OutputLocation): CallPlaces {
  const { unredacted } = redactionInputOf(config, output);
  return {
    output,
    stagingPrefix: config.s3.stagingPrefix,
    ...(unredacted ? { unredacted } : {}),
    tables: tablesOf(config, output),
  };
}

/** The calls `command` was asked about: ids or one lookup, never both; refused with a clear line. */
export async function callsAsked(
  command: string,
  config: Config,
  values: { out?: string | undefined; offline?: boolean | undefined } & Partial<
    Record<(typeof LOOKUPS)[number], string | undefined>
  >,
  positionals: string[],
): Promise<CallsAsked> {
  const lookups = LOOKUPS.filter((k) => values[k] !== undefined);
  if (lookups.length > 1 || (lookups.length === 1 && positionals.length > 0))
    throw new CliError(`${command}: name calls by id, or ask one of --phone, --email, --customer, not both`);
  if (lookups.length === 0 && positionals.length === 0)
    throw new CliError(`${command}: which calls? give call ids, or --phone, --email or --customer`);
  if (values.out !== undefined && !parseS3Url(values.out))
    throw new CliError(`${command}: --out must be s3://bucket/prefix, got '${values.out}'`);
  const places = callPlacesOf(config, outputLocation(values.out, config));
  const [lookup] = lookups;
  if (lookup === undefined) return { places, callIds: [...new Set(positionals)] };
  const asked = { kind: lookup, value: String(values[lookup]) };
  const callIds = await callIdsHolding(config, asked, { command, offline: values.offline ?? false });
  return { places, callIds, asked };
}
