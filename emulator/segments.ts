/**
 * Speech segment detection on streamed audio (docs/design.md: "detects speech segments from the audio it is
 * sent"). Energy in 10 ms frames: a frame louder than -35 dBFS is sound. The synthetic recordings put
 * DTMF at about -12 dBFS over digital silence or noise near -60 dBFS, so the threshold sits far from both.
 *
 * A segment opens at the first loud frame and closes after `hangoverSeconds` of quiet frames; inside it,
 * each run of loud frames is one tone burst, handed to the DTMF decoder as soon as the run ends. The
 * 40 ms gaps between symbols are shorter than the hangover, so one `*id#` is one segment.
 *
 * Times are in seconds of audio from the first sample pushed (the session's first audio byte, spec 02:
 * `startDetectTime` is measured from the start of the audio). Each event also says at which audio time
 * it became known (`knownAt`), so the session can hold it back until its recognizer clock gets there.
 */
import { decodeSymbol, type TimedSymbol } from './dtmf-decode.ts';

const FRAME_SECONDS = 0.01;
/** Mean square of a loud frame: -35 dBFS. */
const SOUND_THRESHOLD = 10 ** (-35 / 10);
/** Quiet time that ends a segment. Longer than the 40 ms symbol gap, shorter than a pause between lines. */
const DEFAULT_HANGOVER_SECONDS = 0.2;
/** A tone longer than this is cut: bounded memory whatever is sent. */
const MAX_RUN_SECONDS = 0.5;

export type SegmentEvent =
  | { kind: 'start'; start: number; knownAt: number }
  | { kind: 'symbol'; symbols: TimedSymbol[]; knownAt: number }
  | { kind: 'end'; start: number; end: number; symbols: TimedSymbol[]; knownAt: number };

export class Segmenter {
  private readonly frame: number;
  private readonly hangoverFrames: number;
  private readonly edgeAmplitude = Math.sqrt(SOUND_THRESHOLD);
  private pending = new Float32Array(0);
  /** Samples consumed into frames so far. */
  private position = 0;
  private segment:
    { start: number; lastLoudEnd: number; quietFrames: number; symbols: TimedSymbol[] } | undefined;
  private run: { start: number; buffer: Float32Array; length: number } | undefined;

  readonly rate: number;
  constructor(rate: number, hangoverSeconds = DEFAULT_HANGOVER_SECONDS) {
    this.rate = rate;
    this.frame = Math.max(1, Math.round(rate * FRAME_SECONDS));
    this.hangoverFrames = Math.max(1, Math.round(hangoverSeconds / FRAME_SECONDS));
  }

  /** Seconds of audio pushed so far. */
  get seconds(): number {
    return (this.position + this.pending.length) / this.rate;
  }

  push(samples: Float32Array): SegmentEvent[] {
    const events: SegmentEvent[] = [];
    let data = samples;
    if (this.pending.length > 0) {
      data = new Float32Array(this.pending.length + samples.length);
      data.set(this.pending);
      data.set(samples, this.pending.length);
    }
    let offset = 0;
    for (; offset + this.frame <= data.length; offset += this.frame) {
      this.processFrame(data, offset, events);
      this.position += this.frame;
    }
    this.pending = data.slice(offset);
    return events;
  }

  /** End of audio: closes an open tone and segment (a stop request). */
  flush(): SegmentEvent[] {
    const events: SegmentEvent[] = [];
    if (this.pending.length > 0) {
      const tail = new Float32Array(this.frame);
      tail.set(this.pending);
      this.processFrame(tail, 0, events, this.pending.length);
      this.position += this.pending.length;
      this.pending = new Float32Array(0);
    }
    const now = this.position / this.rate;
    this.closeRun(events, now);
    if (this.segment) this.closeSegment(events, now);
    return events;
  }

  private processFrame(data: Float32Array, offset: number, events: SegmentEvent[], valid = this.frame): void {
    let sum = 0;
    for (let i = offset; i < offset + valid; i++) sum += data[i]! * data[i]!;
    const loud = sum / valid > SOUND_THRESHOLD;
    const frameStart = this.position;
    const frameEndSeconds = (frameStart + valid) / this.rate;
    if (loud) {
      // Sub-frame edges: the first and last sample above the threshold amplitude.
      let first = offset;
      while (first < offset + valid - 1 && Math.abs(data[first]!) < this.edgeAmplitude) first++;
      let last = offset + valid - 1;
      while (last > first && Math.abs(data[last]!) < this.edgeAmplitude) last--;
      if (!this.segment) {
        const start = (frameStart + first - offset) / this.rate;
        this.segment = { start, lastLoudEnd: start, quietFrames: 0, symbols: [] };
        events.push({ kind: 'start', start, knownAt: frameEndSeconds });
      }
      if (!this.run)
        this.run = {
          start: (frameStart + first - offset) / this.rate,
          buffer: new Float32Array(this.frame * 16),
          length: 0,
        };
      this.appendToRun(data, offset, valid);
      this.segment.lastLoudEnd = (frameStart + last - offset + 1) / this.rate;
      this.segment.quietFrames = 0;
      return;
    }
    this.closeRun(events, frameEndSeconds);
    if (this.segment) {
      this.segment.quietFrames++;
      if (this.segment.quietFrames >= this.hangoverFrames) this.closeSegment(events, frameEndSeconds);
    }
  }

  private appendToRun(data: Float32Array, offset: number, count: number): void {
    const run = this.run!;
    if (run.length + count > this.rate * MAX_RUN_SECONDS) return;
    if (run.length + count > run.buffer.length) {
      const bigger = new Float32Array(Math.max(run.buffer.length * 2, run.length + count));
      bigger.set(run.buffer.subarray(0, run.length));
      run.buffer = bigger;
    }
    run.buffer.set(data.subarray(offset, offset + count), run.length);
    run.length += count;
  }

  private closeRun(events: SegmentEvent[], knownAt: number): void {
    const run = this.run;
    if (!run || !this.segment) return;
    this.run = undefined;
    // Skip one frame at each edge when the run is long enough: onsets and resampling ringing blur them.
    const trim = run.length >= this.frame * 4 ? this.frame : 0;
    const symbol = decodeSymbol(run.buffer, trim, run.length - trim, this.rate);
    if (symbol === undefined) return;
    this.segment.symbols.push({ symbol, start: run.start, end: this.segment.lastLoudEnd });
    events.push({ kind: 'symbol', symbols: [...this.segment.symbols], knownAt });
  }

  private closeSegment(events: SegmentEvent[], knownAt: number): void {
    const seg = this.segment!;
    this.segment = undefined;
    events.push({ kind: 'end', start: seg.start, end: seg.lastLoudEnd, symbols: seg.symbols, knownAt });
  }
}
