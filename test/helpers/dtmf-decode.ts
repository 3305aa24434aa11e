/**
 * A small Goertzel DTMF decoder for the media tests: turns PCM (or 8 kHz mu-law) back into the phrase
 * ids of a synthetic recording, with their start times, to check a fixture's round trip through the
 * transcode. The emulator has its own decoder (emulator/); this one is deliberately independent.
 */
import { DTMF_FREQUENCIES, DTMF_HIGH_HZ, DTMF_LOW_HZ } from '../../schemas/synthetic-recording.ts';

/** Analysis frame: 25.6 ms (205 samples at 8 kHz, the classic choice), stepped by 10 ms. */
const FRAME_SECONDS = 0.0256;
const HOP_SECONDS = 0.01;
/** A frame quieter than this (RMS, dBFS) holds no tone. */
const MIN_LEVEL_DBFS = -35;
/** Share of the frame's energy each of the two tones must carry (a clean pair carries about 0.5 each). */
const MIN_TONE_SHARE = 0.25;
/** The strongest frequency of each group must beat the runner-up by this power ratio. */
const MIN_GROUP_DOMINANCE = 4;
/** Frames a symbol must last to count (debounces partial frames at tone edges). */
const MIN_SYMBOL_FRAMES = 2;

const SYMBOL_OF = new Map(Object.entries(DTMF_FREQUENCIES).map(([s, [lo, hi]]) => [`${lo}/${hi}`, s]));

/** G.711 mu-law byte → 16-bit linear sample. */
export function mulawToLinear(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = (((u & 0x0f) << 3) + 0x84) << exponent;
  return u & 0x80 ? 0x84 - magnitude : magnitude - 0x84;
}

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = mulawToLinear(bytes[i]!);
  return out;
}

/** Little-endian 16-bit PCM bytes → samples. */
export function decodeS16le(bytes: Buffer): Int16Array {
  const out = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
  return out;
}

function goertzelPower(samples: Int16Array, from: number, n: number, coeff: number): number {
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s0 = samples[from + i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

export interface DecodedSymbol {
  symbol: string;
  /** Seconds from the start of the samples. */
  start: number;
}
export interface DecodedPhrase {
  id: number;
  start: number;
}

/** The symbol in one frame, or undefined. */
function frameSymbol(
  samples: Int16Array,
  from: number,
  n: number,
  coeffs: { lo: number[]; hi: number[] },
): string | undefined {
  let energy = 0;
  for (let i = 0; i < n; i++) energy += samples[from + i]! * samples[from + i]!;
  const minEnergy = n * (32768 * 10 ** (MIN_LEVEL_DBFS / 20)) ** 2;
  if (energy < minEnergy) return undefined;
  const share = (c: number) => (2 * goertzelPower(samples, from, n, c)) / (n * energy);
  const best = (group: number[]) => {
    const shares = group.map(share);
    const order = shares.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0]);
    const [top, second] = [order[0]!, order[1]!];
    return top[0] >= MIN_TONE_SHARE && top[0] >= MIN_GROUP_DOMINANCE * second[0] ? top[1] : -1;
  };
  const lo = best(coeffs.lo);
  const hi = best(coeffs.hi);
  if (lo < 0 || hi < 0) return undefined;
  return SYMBOL_OF.get(`${DTMF_LOW_HZ[lo]}/${DTMF_HIGH_HZ[hi]}`);
}

/** Every DTMF symbol in the samples, in order, with its start time. */
export function decodeDtmfSymbols(samples: Int16Array, sampleRate: number): DecodedSymbol[] {
  const n = Math.round(FRAME_SECONDS * sampleRate);
  const hop = Math.round(HOP_SECONDS * sampleRate);
  const coeff = (f: number) => 2 * Math.cos((2 * Math.PI * f) / sampleRate);
  const coeffs = { lo: DTMF_LOW_HZ.map(coeff), hi: DTMF_HIGH_HZ.map(coeff) };
  const symbols: DecodedSymbol[] = [];
  let current: string | undefined;
  let runStart = 0;
  let runFrames = 0;
  const close = () => {
    if (current !== undefined && runFrames >= MIN_SYMBOL_FRAMES)
      symbols.push({ symbol: current, start: runStart / sampleRate });
  };
  for (let from = 0; from + n <= samples.length; from += hop) {
    const symbol = frameSymbol(samples, from, n, coeffs);
    if (symbol === current) {
      runFrames++;
      continue;
    }
    close();
    current = symbol;
    runStart = from;
    runFrames = 1;
  }
  close();
  return symbols;
}

/** Phrases `*digits#` in the samples, with the start time of their `*`. */
export function decodeDtmfPhrases(samples: Int16Array, sampleRate: number): DecodedPhrase[] {
  const phrases: DecodedPhrase[] = [];
  let open: { start: number; digits: string } | undefined;
  for (const { symbol, start } of decodeDtmfSymbols(samples, sampleRate)) {
    if (symbol === '*') open = { start, digits: '' };
    else if (symbol === '#') {
      if (open && open.digits) phrases.push({ id: Number(open.digits), start: open.start });
      open = undefined;
    } else if (open) open.digits += symbol;
  }
  return phrases;
}
