/**
 * Roles of a stored result decided again (`callpipe rescore`): text cues need no audio, so a rule file
 * with a company's name, or new cues, names the speakers of calls already processed. The voices of a
 * mono call are kept as separated (`voice` on each utterance; separating again needs the audio:
 * `process --redo`). Pure.
 *
 * A new naming is applied when it renames the stored speakers one for one (a swap of agent and customer,
 * a voice now named): talk time, sentiment by speaker and the utterances follow the new names. A naming
 * that would merge two speakers into one needs the text steps again, so the stored roles stay and the
 * summary says why.
 */
import type { ResultDocument } from '../../schemas/result.ts';
import type { RoleSettings, SpeakerRoles } from '../../schemas/speakers.ts';
import { talkTimeBySpeaker } from '../../schemas/talk-time.ts';
import { decideRoles, type RoleCandidate } from './role-model.ts';

export interface RoleOptions {
  mode: 'evidence' | 'fixed';
}

/** The speakers to name: a stored result's tracks, or its voices. */
function candidatesOf(doc: ResultDocument): { source: SpeakerRoles['source']; candidates: RoleCandidate[] } {
  const stored = doc.speakerRoles;
  if (stored?.source === 'voices') {
    const voices = [
      ...new Set(doc.utterances.flatMap((u) => (typeof u.voice === 'number' ? [u.voice] : []))),
    ];
    return {
      source: 'voices',
      candidates: voices
        .sort((a, b) => a - b)
        .map((voice) => ({
          track: doc.utterances.find((u) => u.voice === voice)!.track,
          voice,
          configured: null,
          utterances: doc.utterances.filter((u) => u.voice === voice),
        })),
    };
  }
  // The channel map as configured then (speakerRoles), or as the tracks were named (older results).
  const configured = new Map(stored?.speakers.map((s) => [s.track, s.configured]));
  return {
    source: 'channels',
    candidates: doc.audio.tracks.map((t) => ({
      track: t.track,
      voice: null,
      configured: configured.get(t.track) ?? t.speaker,
      utterances: doc.utterances.filter((u) => u.track === t.track),
    })),
  };
}

/** Renames the keys of a record of speakers. */
function renamed<T>(record: Record<string, T>, rename: Map<string, string>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [rename.get(k) ?? k, v]));
}

/**
 * The result with its roles decided again by `settings`, or the same document when nothing changes.
 * Returns what changed in words, for the rescore report.
 */
export function rescoreRoles(
  doc: ResultDocument,
  settings: RoleSettings,
  options: RoleOptions,
): { doc: ResultDocument; changed: boolean } {
  const stored = doc.speakerRoles;
  // A one-track call recognized before the speakers stage has no voices to name: `process --redo`.
  if (!stored && doc.audio.tracks.length === 1) return { doc, changed: false };
  const { source, candidates } = candidatesOf(doc);
  const { roles, names } = decideRoles({
    source,
    candidates,
    direction: stored?.direction ?? directionOf(doc),
    mode: options.mode,
    settings,
  });
  const key = (c: RoleCandidate) => `${c.track}/${c.voice ?? ''}`;
  const nameOf = new Map(candidates.map((c, i) => [key(c), names[i]!]));
  const rename = new Map<string, string>();
  for (const [i, c] of candidates.entries()) {
    const said = doc.utterances.find(
      (u) => u.track === c.track && (c.voice === null || u.voice === c.voice) && u.speaker !== 'mixed',
    );
    const before = said?.speaker ?? stored?.speakers.find((s) => s.track === c.track)?.speaker;
    if (before) rename.set(before, names[i]!);
  }
  const oneForOne = new Set(rename.values()).size === rename.size;
  const next: SpeakerRoles = oneForOne
    ? { ...roles, ...(stored?.separation ? { separation: stored.separation } : {}) }
    : {
        ...(stored ?? { ...roles, speakers: [] }),
        summary: `${stored?.summary ?? 'roles as recognized'}; the new rule file would name two speakers alike: run process --redo`,
      };
  if (!oneForOne) return { doc: { ...doc, speakerRoles: next }, changed: false };
  const utterances = doc.utterances.map((u) => {
    const name = nameOf.get(`${u.track}/${typeof u.voice === 'number' ? u.voice : ''}`);
    return name && u.speaker !== 'mixed' ? { ...u, speaker: name } : u;
  });
  const speakers = doc.speakers.map((s) => rename.get(s) ?? s);
  const changed = utterances.some((u, i) => u.speaker !== doc.utterances[i]!.speaker);
  const sentiment = doc.sentiment && {
    ...doc.sentiment,
    bySpeaker: renamed(doc.sentiment.bySpeaker, rename),
    byQuarter: doc.sentiment.byQuarter.map((q) => ({ ...q, bySpeaker: renamed(q.bySpeaker, rename) })),
  };
  return {
    doc: {
      ...doc,
      speakers,
      utterances,
      talk: changed ? talkTimeBySpeaker(utterances, doc.audio.durationSeconds, speakers) : doc.talk,
      sentiment,
      speakerRoles: next,
    },
    changed,
  };
}

function directionOf(doc: ResultDocument): 'inbound' | 'outbound' | null {
  const d = doc.source.metadata?.direction;
  return d === 'inbound' || d === 'outbound' ? d : null;
}
