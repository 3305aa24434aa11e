/**
 * Named-entity extraction over the call (spec 01: `/nlp/v1/ne`, one `sentence` string a request): the
 * detector of names and places, which no pattern can find. The call goes in *windows* of whole speaker
 * turns (consecutive utterances of one speaker), each utterance on a line of its own, up to
 * {@link DEFAULT_NE_WINDOW_CHARS}: a turn gives the extraction a name's context (`山田です。` after
 * `お名前を…`) and a window of several keeps the requests per call near the filler step's, not one per
 * utterance (a call has about 1,300 utterances an hour). Entity positions (`begin_pos`, `end_pos`,
 * one past the last character) come back into the window's text and are mapped to utterances.
 *
 * Which classes are personal: persons (`PSN`, extended `Person`), places and addresses (`LOC`,
 * `Address`, `Postal_Address`; not countries, regions or natural features, which locate nobody),
 * `Phone_Number`, `ID_Number`, `Age`, and dates (`DAT`) where a birth date was asked for or given.
 * Organizations, products, amounts and times stay: they are what a call is about.
 */
import type { BuiltInKind } from '../../../schemas/redaction.ts';
import type { NamedEntityResult } from '../../../schemas/service-nlp.ts';
import { isBirthDate } from './birth-dates.ts';
import type { DetectionUtterance, Span, StreamPiece } from './call-streams.ts';

/** Characters per request: the filler step's batch size (the spec gives no limit for `ne`). */
export const DEFAULT_NE_WINDOW_CHARS = 1500;

const LINE = '\n';

export interface NeWindow {
  text: string;
  /** Each utterance's place in the window (`position` in the call's time order). */
  pieces: StreamPiece[];
}

/** Whole turns per window, in time order; a turn longer than a window is split between utterances. */
export function neWindows(
  utterances: readonly DetectionUtterance[],
  maxChars = DEFAULT_NE_WINDOW_CHARS,
): NeWindow[] {
  const turns: number[][] = [];
  utterances.forEach((u, position) => {
    if (u.text.trim() === '') return;
    const turn = turns[turns.length - 1];
    if (turn && utterances[turn[0]!]!.speaker === u.speaker) turn.push(position);
    else turns.push([position]);
  });
  const windows: NeWindow[] = [];
  let current: NeWindow = { text: '', pieces: [] };
  const close = () => {
    if (current.pieces.length > 0) windows.push(current);
    current = { text: '', pieces: [] };
  };
  const add = (position: number) => {
    const text = utterances[position]!.text;
    if (current.pieces.length > 0) current.text += LINE;
    current.pieces.push({ position, offset: current.text.length, length: text.length });
    current.text += text;
  };
  for (const turn of turns) {
    const chars = turn.reduce((n, p) => n + utterances[p]!.text.length + LINE.length, 0);
    if (current.text.length + chars > maxChars) close();
    for (const position of turn) {
      const length = utterances[position]!.text.length;
      if (current.pieces.length > 0 && current.text.length + LINE.length + length > maxChars) close();
      add(position);
    }
  }
  close();
  return windows;
}

/** Extended classes that are places but locate nobody. */
const NOT_PERSONAL_PLACES = new Set([
  'Country',
  'Continental_Region',
  'Domestic_Region',
  'Region',
  'Region_Other',
  'Geological_Region',
  'Geological_Region_Other',
  'Astral_Body',
  'Astral_Body_Other',
  'Star',
  'Planet',
  'Constellation',
  'Mountain',
  'Island',
  'River',
  'Lake',
  'Sea',
  'Bay',
]);
const BY_EXTENDED_CLASS: Readonly<Record<string, BuiltInKind>> = {
  Person: 'name',
  Phone_Number: 'phone',
  Address: 'address',
  Address_Other: 'address',
  Postal_Address: 'address',
  ID_Number: 'idNumber',
  Age: 'age',
};

/** The kind of an entity, `date` for a date that needs its context, or undefined when not personal. */
export function entityKind(entity: NamedEntityResult[number]): BuiltInKind | 'date' | undefined {
  const byExtended = BY_EXTENDED_CLASS[entity.extended_class];
  if (byExtended) return byExtended;
  if (entity.class === 'PSN') return 'name';
  if (entity.class === 'LOC' && !NOT_PERSONAL_PLACES.has(entity.extended_class)) return 'address';
  if (entity.class === 'DAT') return 'date';
  return undefined;
}

/** Code point offset → UTF-16 offset (the spec says "character position"; both are tried). */
function utf16Offset(text: string, codePoints: number): number {
  let i = 0;
  for (let n = 0; n < codePoints && i < text.length; n++) i += text.codePointAt(i)! > 0xffff ? 2 : 1;
  return i;
}

/**
 * Where an entity is in the window: its positions read as UTF-16 units, else as code points, else its
 * form's nearest occurrence. A form found nowhere keeps the given positions: masking a little wrong
 * text is better than leaving a name.
 */
export function locateEntity(
  text: string,
  entity: NamedEntityResult[number],
): { begin: number; end: number } {
  const { begin_pos: b, end_pos: e, form } = entity;
  if (text.slice(b, e) === form) return { begin: b, end: e };
  const cb = utf16Offset(text, b);
  const ce = utf16Offset(text, e);
  if (text.slice(cb, ce) === form) return { begin: cb, end: ce };
  if (form !== '') {
    let best: number | undefined;
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
      if (best === undefined || Math.abs(at - b) < Math.abs(best - b)) best = at;
    }
    if (best !== undefined) return { begin: best, end: best + form.length };
  }
  return { begin: Math.min(b, text.length), end: Math.min(Math.max(e, b), text.length) };
}

/** The spans of a window's entities that hold personal data, cut into the utterances they cover. */
export function entitySpans(
  utterances: readonly DetectionUtterance[],
  window: NeWindow,
  entities: NamedEntityResult,
): Span[] {
  const spans: Span[] = [];
  for (const entity of entities) {
    const kind = entityKind(entity);
    if (!kind) continue;
    const at = locateEntity(window.text, entity);
    for (const piece of window.pieces) {
      const begin = Math.max(at.begin, piece.offset) - piece.offset;
      const end = Math.min(at.end, piece.offset + piece.length) - piece.offset;
      if (end <= begin) continue;
      if (kind === 'date' && !isBirthDate(utterances, piece.position, begin, end)) continue;
      spans.push({
        utterance: utterances[piece.position]!.index,
        begin,
        end,
        kind: kind === 'date' ? 'birthDate' : kind,
        source: 'ne',
      });
    }
  }
  return spans;
}
