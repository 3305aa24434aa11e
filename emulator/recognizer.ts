/**
 * "Recognition" of synthetic recordings (docs/design.md): audio → speech segments → DTMF `*id#` → the
 * phrasebook's text, as the server messages of spec 02 ("Server message"), each stamped with the audio
 * time at which it became known so the session can release it when its recognizer clock gets there.
 *
 * Messages per segment: `speechStartDetected` when it opens; with `enableProgress`, a `recognized` of
 * type 0 each time a further phrase has been decoded; when it closes, `speechEndDetected`, a final
 * `recognized` of type 1 with up to `maxResults` candidates, then a `recognized` of type 2 with an empty
 * `sentence` array, as in the spec's samples. A segment with no complete `*id#`, or an id the phrasebook
 * lacks, is recognized as `〈不明〉` (UNKNOWN_PHRASE_TEXT).
 */
import { UNKNOWN_PHRASE_TEXT } from '../schemas/synthetic-recording.ts';
import { MISHEARD, MISHEARD_SCORE } from './misheard.ts';
import { formatReading, formatSurface } from './asr-text.ts';
import { AudioDecoder } from './audio.ts';
import { parsePhrases, type TimedSymbol } from './dtmf-decode.ts';
import { Segmenter } from './segments.ts';
import type { StartParams } from './start-params.ts';

export type ServerMessage = Record<string, unknown> & {
  msg: { msgname: string; uniqueId: string; cause?: string };
};

export interface TimedMessage {
  /** Audio seconds at which the recognizer knows it. */
  at: number;
  message: ServerMessage;
}

/** Confidence of a decoded phrase and of the placeholder. */
const KNOWN_SCORE = 0.95;
const UNKNOWN_SCORE = 0.1;
/** Alternatives (neighbouring phrase ids, a plausible confusion) lose this much confidence each. */
const ALTERNATIVE_PENALTY = 0.15;
/** At most this many alternatives, whatever maxResults asks: n is an upper limit (spec 02, rule 6). */
const MAX_ALTERNATIVES = 4;

// Times are whole samples (multiples of 1/8 ms at 8 kHz): a half-millisecond tie is real, and float
// noise must not decide it, or the same audio streamed from another offset gets times 1 ms apart.
const TIE_EPSILON_MS = 1e-6;
const ms = (seconds: number) => Math.round(seconds * 1000 + TIE_EPSILON_MS);
const sec = (seconds: number) => ms(seconds) / 1000;

export class Recognizer {
  private readonly decoder: AudioDecoder;
  private readonly segmenter: Segmenter;
  private interimCount = 0;

  private readonly uniqueId: string;
  private readonly params: StartParams;
  private readonly phrasebook: Map<number, string>;
  constructor(uniqueId: string, params: StartParams, phrasebook: Map<number, string>) {
    this.uniqueId = uniqueId;
    this.params = params;
    this.phrasebook = phrasebook;
    this.decoder = new AudioDecoder(params.codec);
    this.segmenter = new Segmenter(params.samplingRate);
  }

  push(bytes: Buffer): TimedMessage[] {
    return this.toMessages(this.segmenter.push(this.decoder.decode(bytes)));
  }

  flush(): TimedMessage[] {
    return this.toMessages(this.segmenter.flush());
  }

  private msg(msgname: string) {
    return { msgname, uniqueId: this.uniqueId };
  }

  private toMessages(events: ReturnType<Segmenter['push']>): TimedMessage[] {
    const out: TimedMessage[] = [];
    for (const e of events) {
      if (e.kind === 'start') {
        this.interimCount = 0;
        out.push({
          at: e.knownAt,
          message: { msg: this.msg('speechStartDetected'), timeinfo: { startDetectTime: ms(e.start) } },
        });
      } else if (e.kind === 'symbol') {
        if (!this.params.enableProgress) continue;
        const phrases = parsePhrases(e.symbols);
        if (phrases.length <= this.interimCount) continue;
        this.interimCount = phrases.length;
        // Interim results show filler, punctuation and delimiter regardless of the options (rule 5).
        const surface = this.text(e.symbols, { filler: true, punctuation: true, delimiter: true });
        const first = phrases[0]!;
        const last = phrases.at(-1)!;
        out.push({
          at: e.knownAt,
          message: {
            msg: this.msg('recognized'),
            result: {
              type: 0,
              sentence: [
                { surface, score: KNOWN_SCORE, startTime: sec(first.start), endTime: sec(last.end) },
              ],
            },
          },
        });
      } else {
        out.push({
          at: e.knownAt,
          message: { msg: this.msg('speechEndDetected'), timeinfo: { endDetectTime: ms(e.end) } },
        });
        out.push({
          at: e.knownAt,
          message: {
            msg: this.msg('recognized'),
            result: { type: 1, sentence: this.candidates(e.symbols, e.start, e.end) },
          },
        });
        out.push({
          at: e.knownAt,
          message: { msg: this.msg('recognized'), result: { type: 2, sentence: [] } },
        });
      }
    }
    return out;
  }

  /** The phrases' texts (dictionary words marked), or undefined for a segment not understood. */
  private texts(symbols: TimedSymbol[], ids?: number[]): string[] | undefined {
    const phraseIds = ids ?? parsePhrases(symbols).map((p) => p.id);
    const texts = phraseIds.map((id) => this.phrasebook.get(id));
    if (texts.length === 0 || texts.some((t) => t === undefined)) return undefined;
    return texts as string[];
  }

  private text(
    symbols: TimedSymbol[],
    options: { filler: boolean; punctuation: boolean; delimiter: boolean },
    ids?: number[],
  ) {
    const texts = this.texts(symbols, ids);
    if (!texts) return UNKNOWN_PHRASE_TEXT;
    return texts.map((t) => formatSurface(t, options)).join(options.delimiter ? ' ' : '');
  }

  private candidates(symbols: TimedSymbol[], start: number, end: number) {
    const p = this.params;
    const options = { filler: p.filler, punctuation: p.punctuation, delimiter: p.delimiter };
    const ids = parsePhrases(symbols).map((x) => x.id);
    const texts = this.texts(symbols, ids);
    const sentence = (phrases: string[] | undefined, score: number) => ({
      surface: phrases
        ? phrases.map((t) => formatSurface(t, options)).join(options.delimiter ? ' ' : '')
        : UNKNOWN_PHRASE_TEXT,
      score,
      startTime: sec(start),
      endTime: sec(end),
      ...(p.reading
        ? { reading: phrases ? phrases.map((t) => formatReading(t, options)).join('') : UNKNOWN_PHRASE_TEXT }
        : {}),
    });
    const misheard = ids.some((id) => MISHEARD.has(id));
    const out = [sentence(texts, !texts ? UNKNOWN_SCORE : misheard ? MISHEARD_SCORE : KNOWN_SCORE)];
    if (!texts || ids.length !== 1) return out;
    // N-best: neighbouring phrases, as a recognizer confuses similar-sounding lines.
    const id = ids[0]!;
    for (
      let k = 1;
      out.length < Math.min(p.maxResults, 1 + MAX_ALTERNATIVES) && k <= 2 * MAX_ALTERNATIVES;
      k++
    ) {
      const other = k % 2 === 1 ? id + Math.ceil(k / 2) : id - k / 2;
      const text = this.phrasebook.get(other);
      if (text === undefined) continue;
      out.push(sentence([text], sec(KNOWN_SCORE - ALTERNATIVE_PENALTY * out.length)));
    }
    return out;
  }
}
