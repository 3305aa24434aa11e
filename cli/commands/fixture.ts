/** `callpipe fixture`: synthesizes a test recording (DTMF phrases) from a script, or from a generated call. */
import { readFile, writeFile } from 'node:fs/promises';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { MediaError } from '../../activities/media/errors.ts';
import { FIXTURE_CONTAINERS, renderFixture, type FixtureContainer } from '../../activities/media/fixture.ts';
import { fixtureScriptSchema, type FixtureScript } from '../../schemas/synthetic-recording.ts';
import { CliError, parseCommandArgs } from '../command.ts';

export const summary = 'synthesizes a test recording from a script (or generates a call)';

export const help = `Usage: callpipe fixture <script.json> <out> [options]
       callpipe fixture --generate <seconds> <out> [--seed N] [--stereo] [--personal-data] [options]

Writes a recording whose phrases are DTMF strings *id# (80 ms tones, 40 ms gaps, -12 dBFS) over
silence or low noise, as the emulator decodes them. The container follows the file name (.wav, .mp3,
.m4a, .flac, .ogg) unless --format is given.

Options:
  --rate <Hz>            sample rate, 8000 to 96000 (default: the script's, else 8000)
  --channels <n>         output channels (default: the script's); extra channels are silent
  --format <name>        wav, mp3, m4a, flac or ogg
  --wav-codec <name>     pcm_s16le (default), pcm_mulaw or pcm_alaw
  --generate <seconds>   generate a call script of this length instead of reading one
  --seed <n>             seed of the generated call (default 1)
  --stereo               generated call: agent on channel 0, customer on channel 1 (default: mono)
  --noise                generated call: low background noise instead of silence
  --personal-data        generated call: opens with a customer giving a name, birth date, phone, card,
                         My Number, address, e-mail and bank account (to see redaction at work)
  --script-out <file>    also write the generated script as JSON
  -h, --help             this text`;

function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new CliError(`fixture: --${name} must be a positive integer, got '${value}'`);
  return n;
}

async function readScript(path: string): Promise<FixtureScript> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new CliError(`fixture: cannot read ${path}: ${(err as Error).message}`);
  }
  const parsed = fixtureScriptSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(`fixture: ${path}: ${issue.path.join('.') || 'script'}: ${issue.message}`);
  }
  return parsed.data;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('fixture', argv, {
    rate: { type: 'string' },
    channels: { type: 'string' },
    format: { type: 'string' },
    'wav-codec': { type: 'string' },
    generate: { type: 'string' },
    seed: { type: 'string' },
    stereo: { type: 'boolean' },
    noise: { type: 'boolean' },
    'personal-data': { type: 'boolean' },
    'script-out': { type: 'string' },
  });
  const generating = values.generate !== undefined;
  if (positionals.length !== (generating ? 1 : 2)) {
    throw new CliError('fixture: expected <script.json> <out>, or --generate <seconds> <out> (see --help)');
  }
  const format = values.format;
  if (format !== undefined && !(FIXTURE_CONTAINERS as readonly string[]).includes(format)) {
    throw new CliError(`fixture: --format must be one of ${FIXTURE_CONTAINERS.join(', ')}`);
  }
  const wavCodec = values['wav-codec'];
  if (wavCodec !== undefined && !['pcm_s16le', 'pcm_mulaw', 'pcm_alaw'].includes(wavCodec)) {
    throw new CliError('fixture: --wav-codec must be pcm_s16le, pcm_mulaw or pcm_alaw');
  }

  let script: FixtureScript;
  if (generating) {
    const seconds = Number(values.generate);
    if (!(seconds >= 2)) throw new CliError(`fixture: --generate needs a length of at least 2 seconds`);
    script = generateCallScript({
      durationSeconds: seconds,
      seed: intOption('seed', values.seed) ?? 1,
      stereo: values.stereo ?? false,
      background: values.noise ? 'noise' : 'silence',
      personalData: values['personal-data'] ?? false,
    });
    if (values['script-out']) await writeFile(values['script-out'], JSON.stringify(script, null, 2));
  } else {
    script = await readScript(positionals[0]!);
  }
  const out = positionals.at(-1)!;
  try {
    const result = await renderFixture(script, out, {
      sampleRate: intOption('rate', values.rate),
      channels: intOption('channels', values.channels),
      container: format as FixtureContainer | undefined,
      wavCodec: wavCodec as 'pcm_s16le' | 'pcm_mulaw' | 'pcm_alaw' | undefined,
    });
    const phrases = script.channels.reduce((n, c) => n + c.phrases.length, 0);
    console.log(
      `${result.path}: ${result.container}, ${result.sampleRate} Hz, ${result.channels} ch, ${result.durationSeconds} s, ${phrases} phrases`,
    );
    return 0;
  } catch (err) {
    if (err instanceof MediaError) throw new CliError(`fixture: ${err.message}`);
    throw err;
  }
}
