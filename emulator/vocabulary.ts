/**
 * Recognition dictionaries in the emulator (spec 02): the temporary words of a start request and the
 * user dictionary of a model and domain, and what they change in recognition.
 *
 * A phrasebook line may hold words a recognizer knows only from a dictionary, marked `《表記|ヨミ》`:
 * said as the reading, written as the surface. Without a dictionary entry for it, recognition prints what
 * it heard, the reading (`ギガヒカリプラス`); with one (matched by reading, or by surface), it prints the
 * entry's surface (`ギガ光プラス`). The higher `prob` wins between entries of one word; a temporary word
 * wins a tie with the user dictionary's.
 *
 * The user dictionary follows spec 02's states: an upload or a clear is reflected at the next top of the
 * hour (minute 0) of the emulator's clock, which runs `speed` times faster from the emulator's start (at
 * speed 100 an hour is 36 s); `isset` is false until then. Before any upload or clear nothing is waiting
 * to be reflected, so `isset` is true (the service's clients read false as "a list is pending").
 */
import type { Clock } from './clock.ts';

export interface VocabularyEntry {
  surface: string;
  reading: string;
  prob: number;
}

const MARK = /《([^|》]+)\|([^》]+)》/gu;
const HOUR_MS = 3_600_000;

/** `text` with each marked word `《surface|reading》` replaced by what `replace` makes of it. */
export function forEachMark(text: string, replace: (surface: string, reading: string) => string): string {
  return text.replace(MARK, (_, surface: string, reading: string) => replace(surface, reading));
}

/**
 * A phrase's text as recognized with `entries` (temporary words first), each dictionary word still
 * marked, as `《printed|reading》`: printed is the entry's surface, or the reading (as heard) without one;
 * the reading is the entry's. Recognition prints the mark as one word (`asr-text.ts`).
 */
function markVocabulary(text: string, entries: readonly VocabularyEntry[]): string {
  return forEachMark(text, (surface, reading) => {
    let best: VocabularyEntry | undefined;
    for (const e of entries) {
      if ((e.reading === reading || e.surface === surface) && (!best || e.prob > best.prob)) best = e;
    }
    return best ? `《${best.surface}|${best.reading}》` : `《${reading}|${reading}》`;
  });
}

/** A phrase's text as recognized with `entries`, as plain text. */
export function resolveVocabulary(text: string, entries: readonly VocabularyEntry[]): string {
  return forEachMark(markVocabulary(text, entries), (printed) => printed);
}

/** The phrasebook as one session hears it (dictionary words marked, see {@link markVocabulary}). */
export function withVocabulary(
  phrasebook: ReadonlyMap<number, string>,
  entries: readonly VocabularyEntry[],
): Map<number, string> {
  return new Map([...phrasebook].map(([id, text]) => [id, markVocabulary(text, entries)]));
}

interface Stored {
  /** What recognition uses (the last reflected state). */
  active: VocabularyEntry[];
  /** The last upload or clear (`[]`), and when it is reflected. */
  pending?: { entries: VocabularyEntry[]; reflectAt: number };
  /** The last uploaded lines, as download returns them. */
  uploaded: VocabularyEntry[];
}

/** User dictionaries per account, model and domain. */
export class UserDictionaries {
  private readonly stored = new Map<string, Stored>();
  private readonly startedAt: number;

  private readonly clock: Clock;
  private readonly speed: number;
  constructor(clock: Clock, speed: number) {
    this.clock = clock;
    this.speed = speed;
    this.startedAt = clock();
  }

  /** The emulator's dictionary time: its clock, `speed` times faster from the start. */
  private now(): number {
    return this.startedAt + (this.clock() - this.startedAt) * this.speed;
  }

  private entry(key: string): Stored {
    let s = this.stored.get(key);
    if (!s) this.stored.set(key, (s = { active: [], uploaded: [] }));
    if (s.pending && this.now() >= s.pending.reflectAt) {
      s.active = s.pending.entries;
      delete s.pending;
    }
    return s;
  }

  private change(key: string, entries: VocabularyEntry[]): void {
    const s = this.entry(key);
    s.pending = { entries, reflectAt: (Math.floor(this.now() / HOUR_MS) + 1) * HOUR_MS };
  }

  upload(key: string, entries: VocabularyEntry[]): void {
    this.change(key, entries);
    this.entry(key).uploaded = entries;
  }

  clear(key: string): void {
    this.change(key, []);
    this.entry(key).uploaded = [];
  }

  /** False while an upload or clear waits for the top of the hour (spec 02), true otherwise (before any too). */
  isSet(key: string): boolean {
    return this.entry(key).pending === undefined;
  }

  download(key: string): VocabularyEntry[] {
    return this.entry(key).uploaded;
  }

  /** The entries recognition uses now. */
  active(key: string): VocabularyEntry[] {
    return this.entry(key).active;
  }
}

export function dictionaryKey(clientId: string, model: string, domainId: string): string {
  return `${clientId}\u0000${model}\u0000${domainId}`;
}
