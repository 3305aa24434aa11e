/**
 * DTMF decoding with the Goertzel algorithm (docs/design.md, "Synthetic recordings the emulator can
 * recognize"; frequencies from schemas/synthetic-recording.ts, ITU-T Q.23).
 *
 * The segmenter hands over one tone burst at a time (a run of loud 10 ms frames); this module says which
 * symbol it is, or none. It works at any sample rate, because Goertzel's coefficient is computed per
 * frequency and rate, so audio recorded at 44.1/48 kHz and resampled, or sent at its own rate, decodes
 * the same.
 */
import { DTMF_FREQUENCIES, DTMF_HIGH_HZ, DTMF_LOW_HZ } from '../schemas/synthetic-recording.ts';

/** Power of one frequency in a window, normalized so a full-scale sine gives about 0.25. */
function goertzelPower(samples: Float32Array, from: number, to: number, rate: number, hz: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = from; i < to; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const n = to - from;
  return (s1 * s1 + s2 * s2 - coeff * s1 * s2) / (n * n);
}

const SYMBOL_BY_PAIR = new Map<string, string>(
  Object.entries(DTMF_FREQUENCIES).map(([symbol, [low, high]]) => [`${low}/${high}`, symbol]),
);

/**
 * Minimum ratio of the strongest to the second strongest frequency of a group. A true tone pair is tens of
 * dB above its neighbours even through mu-law and resampling; noise and speech are flat.
 */
const DOMINANCE = 4;
/** The two tones must carry this share of the window's energy (rejects broadband sound). */
const MIN_TONE_SHARE = 0.5;

/**
 * The symbol in `samples[from, to)`, or undefined. Windows shorter than 15 ms are refused: they cannot
 * separate the low-group frequencies, which are 73 Hz apart.
 */
export function decodeSymbol(
  samples: Float32Array,
  from: number,
  to: number,
  rate: number,
): string | undefined {
  if (to - from < rate * 0.015) return undefined;
  let energy = 0;
  for (let i = from; i < to; i++) energy += samples[i]! * samples[i]!;
  energy /= to - from;
  if (energy <= 0) return undefined;
  const low = DTMF_LOW_HZ.map((hz) => goertzelPower(samples, from, to, rate, hz));
  const high = DTMF_HIGH_HZ.map((hz) => goertzelPower(samples, from, to, rate, hz));
  const pick = (powers: number[]) => {
    const order = powers.map((p, i) => [p, i] as const).sort((a, b) => b[0] - a[0]);
    return { best: order[0]!, second: order[1]! };
  };
  const l = pick(low);
  const h = pick(high);
  if (l.best[0] < DOMINANCE * l.second[0] || h.best[0] < DOMINANCE * h.second[0]) return undefined;
  // A sine of amplitude A has mean square A²/2 and Goertzel power A²/4: twice the power is its energy.
  if ((2 * (l.best[0] + h.best[0])) / energy < MIN_TONE_SHARE) return undefined;
  return SYMBOL_BY_PAIR.get(`${DTMF_LOW_HZ[l.best[1]]}/${DTMF_HIGH_HZ[h.best[1]]}`);
}

/** A decoded symbol and where its tone was, in seconds from the session's first audio byte. */
export interface TimedSymbol {
  symbol: string;
  start: number;
  end: number;
}

/** A phrase `*id#` found in a run of symbols. */
export interface DecodedPhrase {
  id: number;
  start: number;
  end: number;
}

/**
 * The phrases `*` + decimal id + `#` in a symbol sequence. Anything else (a missing `*` or `#`, a stray
 * symbol) is not a phrase: the caller answers the segment with the unknown-phrase placeholder.
 */
export function parsePhrases(symbols: TimedSymbol[]): DecodedPhrase[] {
  const out: DecodedPhrase[] = [];
  let open: { start: number; digits: string } | undefined;
  for (const s of symbols) {
    if (s.symbol === '*') open = { start: s.start, digits: '' };
    else if (s.symbol === '#') {
      if (open && open.digits.length > 0)
        out.push({ id: Number(open.digits), start: open.start, end: s.end });
      open = undefined;
    } else if (open) open.digits += s.symbol;
  }
  return out;
}
