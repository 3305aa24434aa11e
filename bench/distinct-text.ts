/**
 * bench/distinct-text: what one request per distinct text (activities/nlp/unit-requests.ts) saves, on the
 * bench night's scripts, without a stack. Each call's script gives its utterances as the emulator
 * recognizes them (one per phrase, the phrasebook's text, the script's speaker: a mono call's legs stand
 * for the voices the speakers stage separates), cleaned by the emulator's filler removal; then the
 * sentiment and dialog-act units of each grain (schemas/text-units.ts), against their distinct texts.
 * Printed per grain: units (one request each, before) and distinct texts (after), per audio hour.
 *
 *   node scripts/on-node.mjs ts bench/distinct-text.ts [--calls 12] [--min-minutes 3] [--max-minutes 60] [--seed 7] [--stereo]
 */
import { parseArgs } from 'node:util';
import { nightSpecs, scriptOf } from './lib/night-set.ts';
import { loadPhrasebook } from '../emulator/phrasebook.ts';
import { removeFiller } from '../emulator/nlp/remove-filler.ts';
import { phraseDurationSeconds } from '../schemas/synthetic-recording.ts';
import { textUnits, type UnitUtterance } from '../schemas/text-units.ts';
import { TEXT_GRAINS } from '../schemas/text-grains.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '12' },
    'min-minutes': { type: 'string', default: '3' },
    'max-minutes': { type: 'string', default: '60' },
    seed: { type: 'string', default: '7' },
    stereo: { type: 'boolean', default: false },
    window: { type: 'string', default: '30' },
  },
});
const book = loadPhrasebook();
const windowSeconds = Number(values.window);
const specs = nightSpecs({
  calls: Number(values.calls),
  minSeconds: Number(values['min-minutes']) * 60,
  maxSeconds: Number(values['max-minutes']) * 60,
  seed: Number(values.seed),
  allStereo: values.stereo,
});

/** The text the fillers step leaves of a phrase (the emulator's remove_filler, as fillers.ts reads it). */
const cleaned = (text: string) =>
  removeFiller(text, true)
    .map((r) => r.fixed_sentence)
    .join('')
    .replace(/^[\s、，,]+/u, '')
    .trim();

const totals = Object.fromEntries(TEXT_GRAINS.map((g) => [g, { units: 0, distinct: 0 }]));
let audioSeconds = 0;
for (const spec of specs) {
  const script = scriptOf(spec);
  const said: UnitUtterance[] = script.channels
    .flatMap((channel, c) =>
      channel.phrases.map((p) => ({ speaker: spec.stereo ? c : (p.leg ?? 0), id: p.id, start: p.start })),
    )
    .sort((a, b) => a.start - b.start)
    .map((p, index) => ({
      utterance: {
        index,
        speaker: p.speaker === 0 ? 'agent' : 'customer',
        start: p.start,
        end: p.start + phraseDurationSeconds(p.id),
      },
      text: cleaned(book.get(p.id) ?? ''),
    }));
  const line: string[] = [];
  for (const grain of TEXT_GRAINS) {
    const units = textUnits(said, grain, windowSeconds);
    const distinct = new Set(units.map((u) => u.text)).size;
    totals[grain]!.units += units.length;
    totals[grain]!.distinct += distinct;
    line.push(`${grain} ${units.length} → ${distinct}`);
  }
  audioSeconds += spec.durationSeconds;
  console.error(`${spec.name}: ${said.length} utterances; ${line.join(', ')}`);
}
const perHour = (n: number) => Math.round(n / (audioSeconds / 3600));
console.log(
  JSON.stringify({
    calls: specs.length,
    audioHours: Math.round((audioSeconds / 3600) * 100) / 100,
    perAudioHour: Object.fromEntries(
      Object.entries(totals).map(([g, t]) => [
        g,
        {
          units: perHour(t.units),
          distinct: perHour(t.distinct),
          ratio: Math.round((t.distinct / t.units) * 1000) / 1000,
        },
      ]),
    ),
  }),
);
