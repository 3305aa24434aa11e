/**
 * The speakers stage (docs/design.md, data flow: "speakers: separate one-track calls by voice, name roles by
 * evidence"): one activity on the media queue, between the merge and redaction, so that every later step
 * (sentiment by speaker, talk time, rules, tables, pages) reads who said what as established here.
 *
 * On a one-track call (mono, or channels mixed down) it reads the staged 8-kHz mu-law audio, separates
 * the utterances into voices (speaker-separator.ts: the speaker-embedding model when installed, else
 * voice-separation.ts) and names them by the role model (role-model.ts); on a
 * call of a track per speaker it checks the channel map against the evidence and swaps it when the
 * evidence contradicts it with high confidence (never with `plan.channels.roles: fixed`). It writes the
 * timeline with speakers and the speakers document (schemas/speakers.ts) to staging; only small facts go
 * back to the workflow. A separation that cannot finish leaves the call's speakers as they were, with the
 * reason: it never fails the call.
 */
import { sessionByteRange } from '../../schemas/media-transcode.ts';
import type { Track } from '../../schemas/plan.ts';
import {
  SPEAKERS_DOCUMENT_VERSION,
  speakersDocumentSchema,
  type RoleDecision,
  type RoleSettings,
  type SeparationFacts,
  type SpeakerRoles,
} from '../../schemas/speakers.ts';
import { timelineSchema, type Timeline, type Utterance } from '../../schemas/transcript.ts';
import { decodeMulawInto } from '../../schemas/g711.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { metrics } from '../metrics.ts';
import { defaultRules, storedRules, type LoadedRules } from '../insights/rule-file.ts';
import { decideRoles, UNKNOWN_SPEAKER, type RoleCandidate } from './role-model.ts';
import { separateByLine } from './line-separation.ts';
import type { AudioReader, SeparationResult } from './voice-separation.ts';
import { voiceSeparator } from './speaker-separator.ts';

/** Sample rate of staged recognition audio (8 kHz mu-law, spec 02). */
const STAGED_SAMPLE_RATE = 8000;

/** A staged session of a one-track call: where its audio is and what part of the call it covers. */
export interface StagedSessionAudio {
  session: number;
  start: number;
  end: number;
  audioKey: string;
  /**
   * Where the object starts on the recording's clock: 0 for the plan's staged track, which every
   * session of the call shares; absent, the session's own object (runs from before), at `start`.
   */
  audioStart?: number;
}

export interface AssignSpeakersInput {
  callId: string;
  /** The merged timeline (staging). */
  timelineKey: string;
  /** Where the timeline with speakers goes. */
  outputTimelineKey: string;
  /** Where the speakers document goes (call-keys `speakers`). */
  outputKey: string;
  tracks: Track[];
  /** Staged audio of each session, for the voice separation of a one-track call. */
  sessions: StagedSessionAudio[];
  rulesKey?: string | undefined;
  direction?: 'inbound' | 'outbound' | undefined;
  /** `fixed`: the channel map stands whatever is said. */
  roles: 'evidence' | 'fixed';
  /** `off`: a one-track call stays one `mixed` speaker. */
  voices: 'separate' | 'line' | 'off';
}

/** What the workflow keeps: the search attribute, the night report's counts. */
export interface AssignSpeakersOutput {
  timelineKey: string;
  speakersKey: string;
  decision: RoleDecision;
  swapped: boolean;
  inferred: boolean;
  speakers: string[];
  voices?: number;
}

/** Role cues of a rule file, or the shipped default's when the file has none. */
export function roleSettingsOf(rules: LoadedRules): RoleSettings {
  return rules.rules.roles ?? defaultRules().rules.roles!;
}

/** Is this a call whose one track hears everyone? */
export function isOneTrackCall(tracks: readonly Pick<Track, 'speaker'>[]): boolean {
  return tracks.length === 1 && tracks[0]!.speaker === UNKNOWN_SPEAKER;
}

/**
 * Staged sessions as one reader of the call's audio (seconds on the recording's clock). Each read decodes
 * only the bytes it covers: the separation reads a few short frames of each utterance, a tenth of the
 * call, so decoding the whole call up front would cost about ten times as much.
 */
export function stagedAudioReader(sessions: { start: number; bytes: Uint8Array }[]): AudioReader {
  const ordered = [...sessions].sort((a, b) => a.start - b.start);
  const starts = ordered.map((s) => Math.round(s.start * STAGED_SAMPLE_RATE));
  /** The samples [from, to) of [start, end) s, at most `limit` of them (the reader's sample rule). */
  function span(start: number, end: number, limit = Infinity): { from: number; to: number } {
    const from = Math.max(0, Math.round(start * STAGED_SAMPLE_RATE));
    return { from, to: Math.max(from, Math.min(Math.round(end * STAGED_SAMPLE_RATE), from + limit)) };
  }
  function readInto(start: number, end: number, out: Float32Array, at: number, limit: number): number {
    const { from, to } = span(start, end, limit);
    // Samples up to `written` are done; where no session covers the span, silence.
    let written = from;
    for (let i = 0; i < ordered.length && written < to; i++) {
      const s0 = starts[i]!;
      const bytes = ordered[i]!.bytes;
      const a = Math.max(written, s0);
      const b = Math.min(to, s0 + bytes.length);
      if (b <= a) continue;
      if (a > written) out.fill(0, at + written - from, at + a - from);
      decodeMulawInto(bytes, a - s0, b - s0, out, at + a - from);
      written = b;
    }
    if (written < to) out.fill(0, at + written - from, at + to - from);
    return to - from;
  }
  /** The codes readInto would decode, when the first session it would read holds all of them. */
  function mulawCodes(start: number, end: number, limit: number): Uint8Array | null {
    const { from, to } = span(start, end, limit);
    for (let i = 0; i < ordered.length; i++) {
      const s0 = starts[i]!;
      const bytes = ordered[i]!.bytes;
      if (Math.min(to, s0 + bytes.length) <= Math.max(from, s0)) continue;
      return from >= s0 && to <= s0 + bytes.length ? bytes.subarray(from - s0, to - s0) : null;
    }
    return null;
  }
  return {
    sampleRate: STAGED_SAMPLE_RATE,
    mulawCodes,
    read(start, end) {
      const { from, to } = span(start, end);
      const out = new Float32Array(to - from);
      readInto(start, end, out, 0, to - from);
      return out;
    },
    readInto,
  };
}

/**
 * Each staged object read once (a one-track call's sessions share its track: one GET for the call),
 * each session its own range of it, so what no session covers (a skipped silence) reads as silence.
 */
export async function readStagedAudio(
  store: Pick<ObjectStore, 'getBuffer'>,
  sessions: readonly StagedSessionAudio[],
): Promise<AudioReader> {
  const objects = new Map<string, Promise<Buffer>>();
  for (const s of sessions)
    if (!objects.has(s.audioKey)) objects.set(s.audioKey, store.getBuffer(s.audioKey));
  const staged = await Promise.all(
    sessions.map(async (s) => {
      const bytes = await objects.get(s.audioKey)!;
      const range = sessionByteRange(s);
      return { start: s.start, bytes: bytes.subarray(range.start, Math.min(range.end, bytes.length)) };
    }),
  );
  return stagedAudioReader(staged);
}

/** The role model on the call's candidates, with the stage's options. */
function decide(
  source: 'channels' | 'voices',
  candidates: RoleCandidate[],
  settings: RoleSettings,
  options: Pick<AssignSpeakersInput, 'direction' | 'roles'>,
) {
  return decideRoles({
    source,
    candidates,
    direction: options.direction ?? null,
    mode: options.roles,
    settings,
  });
}

/** The timeline with speakers, and the document, for a call of a track per speaker. */
export function assignTrackRoles(
  timeline: Timeline,
  tracks: readonly Track[],
  settings: RoleSettings,
  options: Pick<AssignSpeakersInput, 'direction' | 'roles'>,
): { timeline: Timeline; roles: SpeakerRoles } {
  const candidates: RoleCandidate[] = tracks.map((t) => ({
    track: t.track,
    voice: null,
    configured: t.speaker,
    utterances: timeline.utterances.filter((u) => u.track === t.track),
  }));
  const { roles, names } = decide('channels', candidates, settings, options);
  const nameOf = new Map(tracks.map((t, i) => [t.track, names[i]!]));
  return {
    timeline: withSpeakers(timeline, (u) => ({
      speaker: nameOf.get(u.track) ?? u.speaker,
      speakerConfidence: 1,
    })),
    roles,
  };
}

/** The timeline with speakers, and the document, for a one-track call separated by voice. */
export function assignVoiceRoles(
  timeline: Timeline,
  audio: AudioReader,
  settings: RoleSettings,
  options: Pick<AssignSpeakersInput, 'direction' | 'roles'> & { byLine?: boolean },
): { timeline: Timeline; roles: SpeakerRoles } {
  const utterances = timeline.utterances;
  const separated = separateOrExplain(audio, utterances, options.byLine === true);
  const separation: SeparationFacts = {
    voices: separated.voices,
    joined: separated.joined,
    unassigned: separated.assignments.filter((a) => a.voice === null).length,
    ...(separated.reason ? { reason: separated.reason } : {}),
    cpuMs: Math.round(separated.cpuMs),
  };
  const track = utterances[0]?.track ?? 0;
  const candidates: RoleCandidate[] = [...Array(separated.voices).keys()].map((voice) => ({
    track,
    voice,
    configured: null,
    utterances: utterances.filter((_, i) => separated.assignments[i]?.voice === voice),
  }));
  const { roles, names } = decide('voices', candidates, settings, options);
  if (separated.voices === 0) {
    roles.summary = `voices could not be told apart: ${separated.reason ?? 'no usable speech'}`;
  }
  return {
    timeline: withSpeakers(timeline, (_, i) => {
      const a = separated.assignments[i];
      if (!a || a.voice === null) return { speaker: UNKNOWN_SPEAKER, speakerConfidence: 0, voice: null };
      return {
        speaker: names[a.voice] ?? UNKNOWN_SPEAKER,
        speakerConfidence: Math.round(a.confidence * 1000) / 1000,
        voice: a.voice,
        ...(a.joined ? { joined: true } : {}),
      };
    }),
    roles: { ...roles, separation },
  };
}

/** The separation, or (should it throw) none, with the reason: the call then keeps one `mixed` speaker. */
function separateOrExplain(
  audio: AudioReader,
  utterances: readonly Utterance[],
  byLine: boolean,
): SeparationResult {
  const spans = utterances.map((u) => ({ start: u.start, end: u.end }));
  try {
    if (byLine) return separateByLine(audio, spans);
    const separator = voiceSeparator();
    const result = separator.separate(audio, spans);
    if (!separator.note) return result;
    return { ...result, reason: result.reason ? `${separator.note}; ${result.reason}` : separator.note };
  } catch (err) {
    return {
      voices: 0,
      assignments: spans.map(() => ({ voice: null, confidence: 0, joined: false })),
      joined: 0,
      reason: `the voice separation could not finish: ${(err as Error).message}`,
      cpuMs: 0,
    };
  }
}

function withSpeakers(
  timeline: Timeline,
  assign: (u: Utterance, i: number) => Pick<Utterance, 'speaker' | 'speakerConfidence' | 'voice' | 'joined'>,
): Timeline {
  const utterances = timeline.utterances.map((u, i) => ({ ...u, ...assign(u, i) }));
  const named = [...new Set(utterances.map((u) => u.speaker))];
  // Agent first, then customer, then the rest as heard: the order every page and table shows.
  const rank = (s: string) => (s === 'agent' ? 0 : s === 'customer' ? 1 : 2);
  const speakers = named.length ? [...named].sort((a, b) => rank(a) - rank(b)) : timeline.speakers;
  return timelineSchema.parse({ ...timeline, speakers, utterances });
}

export interface SpeakersActivityDeps {
  /** Staging storage: the timeline, the staged audio, the stored rule files. */
  store: ObjectStore;
}

export function createSpeakersActivities({ store }: SpeakersActivityDeps) {
  const rulesOf = storedRules(store);

  return {
    /** Separates and names the call's speakers; writes the timeline with speakers and the document. */
    async assignSpeakers(input: AssignSpeakersInput): Promise<AssignSpeakersOutput> {
      const [timeline, rules] = await Promise.all([
        store.getText(input.timelineKey).then((t) => timelineSchema.parse(JSON.parse(t))),
        rulesOf(input.rulesKey),
      ]);
      const settings = roleSettingsOf(rules);
      const separate = isOneTrackCall(input.tracks) && input.voices !== 'off';
      const assigned = separate
        ? assignVoiceRoles(timeline, await readStagedAudio(store, input.sessions), settings, {
            ...input,
            byLine: input.voices === 'line',
          })
        : assignTrackRoles(timeline, input.tracks, settings, input);
      const document = speakersDocumentSchema.parse({
        version: SPEAKERS_DOCUMENT_VERSION,
        callId: input.callId,
        roles: assigned.roles,
      });
      await Promise.all([
        store.put(input.outputTimelineKey, JSON.stringify(assigned.timeline), {
          contentType: 'application/json',
        }),
        store.put(input.outputKey, `${JSON.stringify(document, null, 2)}\n`, {
          contentType: 'application/json; charset=utf-8',
        }),
      ]);
      const { roles } = assigned;
      metrics.speakerRoles(roles.decision, roles.source);
      return {
        timelineKey: input.outputTimelineKey,
        speakersKey: input.outputKey,
        decision: roles.decision,
        swapped: roles.swapped,
        inferred: roles.inferred,
        speakers: assigned.timeline.speakers,
        ...(roles.separation ? { voices: roles.separation.voices } : {}),
      };
    },
  };
}

export type SpeakersActivities = ReturnType<typeof createSpeakersActivities>;
