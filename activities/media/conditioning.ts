/**
 * Conditioning: what every ffmpeg run that feeds the silence logic or the recognizer applies to the
 * audio. Telephone recordings often carry a DC offset (a cheap ADC, a line card) and mains hum (50 or
 * 60 Hz and its harmonics); neither is speech, yet both keep a level detector above any threshold, so
 * a silence scan finds no silence and the recognizer hears one endless segment. The telephony band
 * starts at 300 Hz (ITU-T G.712), so a high-pass below it removes both and leaves speech alone.
 *
 * Two 2nd-order Butterworth sections at 200 Hz (a 4th-order slope): DC removed entirely, 50 Hz hum down
 * about 48 dB, 60 Hz 44 dB, 100 Hz 25 dB, 150 Hz 12 dB, while 300 Hz loses 1.6 dB and 400 Hz under 0.5 dB.
 */

/** The high-pass corner, Hz: below the telephony band (300 Hz and up), above mains hum and its first harmonics. */
const CONDITIONING_HIGHPASS_HZ = 200;

/** Butterworth quality factor of each section (ffmpeg's highpass default, width 0.707 as Q). */
const SECTION_Q = 0.707;
/** Cascaded sections (Conditioner.processBlock unrolls exactly this many). */
const SECTIONS = 2;

/** ffmpeg filters that condition a stream, in order (append after resampling: cheapest at the lower rate). */
export function conditioningFilters(): string[] {
  const section = `highpass=f=${CONDITIONING_HIGHPASS_HZ}:poles=2:width_type=q:width=${SECTION_Q}`;
  return Array.from({ length: SECTIONS }, () => section);
}

/**
 * After a sound, digital silence (exact zeros: a muted line, a pause of a synthetic or VoIP recording) lets
 * the filter's state decay into subnormal numbers, on which the CPU's arithmetic is tens of times slower,
 * for as long as the silence lasts. A state this small (in 16-bit units) is set to zero instead, every
 * {@link FLUSH_EVERY_SAMPLES}: between two flushes it decays by far less than from here to the subnormals.
 */
const TINY_STATE = 1e-20;
const FLUSH_EVERY_SAMPLES = 1024;
const flushTiny = (v: number) => (v < TINY_STATE && v > -TINY_STATE ? 0 : v);

/**
 * The same conditioning in Node, for the channel analysis, which reads the decoded samples itself
 * (ffmpeg's astats, the alternative for the DC offset it also reports, cost several times the decode):
 * the high-pass sections of {@link conditioningFilters} as ffmpeg computes them (the Audio EQ Cookbook
 * biquad, transposed direct form II), one state per channel. `process` takes and returns one sample.
 */
export class Conditioner {
  private readonly b0: number;
  private readonly b1: number;
  private readonly b2: number;
  private readonly a1: number;
  private readonly a2: number;
  /** Two state variables per section and channel. */
  private readonly state: Float64Array;

  readonly channels: number;
  constructor(sampleRate: number, channels: number) {
    this.channels = channels;
    const w0 = (2 * Math.PI * CONDITIONING_HIGHPASS_HZ) / sampleRate;
    const alpha = Math.sin(w0) / (2 * SECTION_Q);
    const cos = Math.cos(w0);
    const a0 = 1 + alpha;
    this.b0 = (1 + cos) / 2 / a0;
    this.b1 = -(1 + cos) / a0;
    this.b2 = (1 + cos) / 2 / a0;
    this.a1 = (-2 * cos) / a0;
    this.a2 = (1 - alpha) / a0;
    this.state = new Float64Array(channels * SECTIONS * 2);
  }

  process(channel: number, sample: number): number {
    const out = new Float64Array(1);
    this.processBlock(channel, Int16Array.of(sample), 0, 1, out);
    return out[0]!;
  }

  /**
   * Conditions one channel of interleaved samples (`input[offset]`, `input[offset + stride]`, …) into
   * `out` (one value per frame), carrying the channel's state over to the next block.
   */
  processBlock(channel: number, input: Int16Array, offset: number, stride: number, out: Float64Array): void {
    const { b0, b1, b2, a1, a2, state } = this;
    const at = channel * SECTIONS * 2;
    // Two sections, unrolled, with their state in locals: this loop runs for every sample of a call.
    let s1 = state[at]!;
    let s2 = state[at + 1]!;
    let t1 = state[at + 2]!;
    let t2 = state[at + 3]!;
    for (let i = offset, n = 0; i < input.length;) {
      const stop = Math.min(input.length, i + FLUSH_EVERY_SAMPLES * stride);
      for (; i < stop; i += stride, n++) {
        const x = input[i]!;
        const y = b0 * x + s1;
        s1 = b1 * x - a1 * y + s2;
        s2 = b2 * x - a2 * y;
        const z = b0 * y + t1;
        t1 = b1 * y - a1 * z + t2;
        t2 = b2 * y - a2 * z;
        out[n] = z;
      }
      s1 = flushTiny(s1);
      s2 = flushTiny(s2);
      t1 = flushTiny(t1);
      t2 = flushTiny(t2);
    }
    state[at] = s1;
    state[at + 1] = s2;
    state[at + 2] = t1;
    state[at + 3] = t2;
  }
}
