/** `callpipe plan <file>`: probes a recording and prints its session plan (JSON) without processing it. */
import { MediaError } from '../../activities/media/errors.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { LIMIT_DEFAULTS, SERVICE_MAX_SESSION_SECONDS } from '../../schemas/limits.ts';
import type { PlanOptions } from '../../schemas/plan.ts';
import { CliError, parseCommandArgs } from '../command.ts';

export const summary = 'prints the session plan of a recording (JSON) without processing it';

export const help = `Usage: callpipe plan <file> [options]

Probes a local recording, scans it for silence and prints its session plan as JSON: the tracks
(channel → speaker) and, per track, sessions of at most --max-session seconds cut in silence.

Options:
  --max-session <s>     longest session in seconds (default ${SERVICE_MAX_SESSION_SECONDS}, the service's limit)
  --strategy <name>     fixed (default) or balanced
  --budget <n>          balanced: concurrent sessions available (default ${LIMIT_DEFAULTS.asrConcurrentSessions})
  --min-session <s>     balanced: shortest session in seconds (default ${LIMIT_DEFAULTS.minSessionSeconds})
  --window <s>          silence search window in seconds (default 60)
  --noise <dB>          silence threshold in dBFS (default -30)
  --min-silence <s>     shortest silence in seconds (default 0.3)
  --skip-silence <s>    a silence this long is not streamed (default 60)
  --mix                 mix the channels down to one track
  --pick <list>         source channels to use, e.g. 0,1
  --speakers <list>     speaker per source channel, e.g. customer,agent
  --compact             one line of JSON
  -h, --help            this text`;

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new CliError(`plan: --${name} must be a number, got '${value}'`);
  return n;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('plan', argv, {
    'max-session': { type: 'string' },
    strategy: { type: 'string' },
    budget: { type: 'string' },
    'min-session': { type: 'string' },
    window: { type: 'string' },
    noise: { type: 'string' },
    'min-silence': { type: 'string' },
    'skip-silence': { type: 'string' },
    mix: { type: 'boolean' },
    pick: { type: 'string' },
    speakers: { type: 'string' },
    compact: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new CliError('plan: expected one file (see callpipe plan --help)');
  const strategy = values.strategy;
  if (strategy !== undefined && strategy !== 'fixed' && strategy !== 'balanced') {
    throw new CliError(`plan: --strategy must be fixed or balanced, got '${strategy}'`);
  }
  const pick = values.pick?.split(',').map((c) => numberOption('pick', c.trim())!);
  const options: PlanOptions = {
    strategy,
    maxSessionSeconds: numberOption('max-session', values['max-session']),
    budget: numberOption('budget', values.budget),
    minSessionSeconds: numberOption('min-session', values['min-session']),
    searchWindowSeconds: numberOption('window', values.window),
    silenceNoiseDb: numberOption('noise', values.noise),
    silenceMinSeconds: numberOption('min-silence', values['min-silence']),
    skipSilenceSeconds: numberOption('skip-silence', values['skip-silence']),
    channels: {
      ...(values.mix ? { mode: 'mix' as const } : {}),
      ...(pick ? { pick } : {}),
      ...(values.speakers ? { speakers: values.speakers.split(',').map((s) => s.trim()) } : {}),
    },
  };
  for (const key of Object.keys(options) as (keyof PlanOptions)[])
    if (options[key] === undefined) delete options[key];

  try {
    const probe = await probeRecording(positionals[0]!);
    const plan = await planRecording(probe, options);
    console.log(values.compact ? JSON.stringify(plan) : JSON.stringify(plan, null, 2));
    return 0;
  } catch (err) {
    // A bad recording or option is the user's to fix: one line, exit 1.
    if (err instanceof MediaError) throw new CliError(`plan: ${err.message}`, 1);
    throw err;
  }
}
