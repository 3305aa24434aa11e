/**
 * The session plan of one recording: which channels are recognized as which speaker (tracks), and the
 * recognition sessions of each track, each at most `maxSessionSeconds` long (spec 02 Limits: 3,000 s of
 * stream audio per session) and cut, whenever the search window holds one, inside a silence. Long
 * silences are left out: sessions cover a track's speech, at their true times in the recording.
 *
 * Channel, track, speaker and session mean what docs/terminology.md says (a channel is the file's, a
 * track is what one recognition hears, so a track's `channel` may be `mix`). Times are seconds from the
 * recording's start, on a millisecond grid, so a session of N s is exactly N × 8,000 bytes of 8 kHz mu-law.
 */
import { z } from 'zod';
import { LIMIT_DEFAULTS, SERVICE_MAX_SESSION_SECONDS } from './limits.ts';
import { lengthCheckSchema } from './media-probe.ts';
import { SESSION_RECOGNITIONS } from './recognition.ts';

/**
 * How sessions are cut: `fixed` (as long as allowed), `balanced` (lengths from a concurrent-session
 * budget: a night's throughput), `latency` (a same-day call: short pieces cut in silence that stream side
 * by side while the account has sessions free, else the throughput plan).
 */
export const PLAN_STRATEGIES = ['fixed', 'balanced', 'latency'] as const;
/** The strategies a latency plan falls back to when the account is busy. */
const THROUGHPUT_STRATEGIES = ['fixed', 'balanced'] as const;

/**
 * latency: the shortest piece. Each session costs a start and a stop request and two activities, and the
 * time of a call is its longest piece plus a fixed overhead, so pieces much shorter gain little.
 */
export const LATENCY_MIN_SESSION_SECONDS = 45;

/**
 * The room the account's recognition sessions have when a latency plan is cut (activities/watch/
 * session-room.ts), as the plan records it.
 */
const sessionRoomSchema = z.object({
  /** Sessions that could open now: the limit less the sessions held. */
  free: z.number().int().nonnegative(),
  /** Recognition sessions of other calls waiting for a slot (the asr task queue's backlog). */
  waiting: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
  /**
   * `account`: the account's session budget (its leases held); `worker`: no budget runs, so the limit is
   * one asr process's cap and only the waiting sessions tell that it is busy.
   */
  source: z.enum(['account', 'worker']),
});
export type SessionRoom = z.infer<typeof sessionRoomSchema>;

/** How a session's end was chosen: in a silence, at the limit for want of one, or at the recording's end. */
export const cutKindSchema = z.enum(['silence', 'hard', 'end']);

export const silenceSchema = z.object({ start: z.number().nonnegative(), end: z.number().nonnegative() });
export type Silence = z.infer<typeof silenceSchema>;

/** A source channel index, or `mix` for a track that mixes several channels. */
const trackChannelSchema = z.union([z.number().int().nonnegative(), z.literal('mix')]);

const trackSchema = z.object({
  track: z.number().int().nonnegative(),
  channel: trackChannelSchema,
  /** Source channels heard by this track: one, or several mixed down at equal gain. */
  sourceChannels: z.array(z.number().int().nonnegative()).min(1),
  speaker: z.string().min(1),
});
export type Track = z.infer<typeof trackSchema>;

const planSessionSchema = z.object({
  /** Position in the plan (track by track, in time order). */
  index: z.number().int().nonnegative(),
  track: z.number().int().nonnegative(),
  channel: trackChannelSchema,
  speaker: z.string().min(1),
  start: z.number().nonnegative(),
  end: z.number().positive(),
  /** How the end was chosen. */
  cut: cutKindSchema,
  /** The silence the cut was placed in (`cut: 'silence'`), else null. */
  silence: silenceSchema.nullable(),
  /**
   * `file`: a piece of at most 58 s recognized by one file request; `stream` (or absent, as in plans made
   * before file recognition): a stream session (schemas/recognition.ts).
   */
  recognition: z.enum(SESSION_RECOGNITIONS).optional(),
});
export type PlanSession = z.infer<typeof planSessionSchema>;

/**
 * What the channel analysis found in one source channel (activities/media/channel-analysis.ts), after
 * conditioning (DC and hum removed). Levels are dBFS of 10-ms peaks; null for digital silence.
 */
export const channelFactsSchema = z.object({
  channel: z.number().int().nonnegative(),
  /** What its loudest 0.1 % of 10-ms windows reach. */
  levelDb: z.number().nullable(),
  /** What its quietest 10 % of windows stay under. */
  noiseFloorDb: z.number().nullable(),
  /** Quieter than this is silence: the noise floor plus a margin, bounded by the configured threshold. */
  silenceThresholdDb: z.number(),
  /** Mean of the raw samples (before conditioning), as a fraction of full scale. */
  dcOffset: z.number(),
  /** Time above the threshold. */
  activeSeconds: z.number().nonnegative(),
  /** `silent`: nothing above its threshold all call long; `duplicate`: the same signal as `duplicateOf`. */
  status: z.enum(['speech', 'silent', 'duplicate']),
  duplicateOf: z.number().int().nonnegative().optional(),
  /** Correlation with `duplicateOf` (-1 to 1; near -1 is the same signal inverted). */
  correlation: z.number().optional(),
});
export type ChannelFacts = z.infer<typeof channelFactsSchema>;

/** Channel → speaker mapping (see activities/media/channels.ts for the rules). */
export const channelOptionsSchema = z.object({
  /** Speaker of source channel i; default `agent`, `customer`, then `channel-<i>`. */
  speakers: z.array(z.string().min(1)).optional(),
  /** `separate`: one track per channel (default for mono and stereo); `mix`: one track of all (picked) channels. */
  mode: z.enum(['separate', 'mix']).optional(),
  /** Source channels to use; default: all. A file of more than two channels is mixed unless channels are picked. */
  pick: z.array(z.number().int().nonnegative()).min(1).optional(),
  /**
   * Recognize a channel that carries the same signal as another once (as `mixed`), and leave out a
   * channel silent for the whole call (default true); false keeps every track as mapped.
   */
  detect: z.boolean().optional(),
  /**
   * `evidence` (default): the speakers stage swaps agent and customer when what each says contradicts
   * this map with high confidence; `fixed`: the map stands whatever is said (activities/speakers/).
   */
  roles: z.enum(['evidence', 'fixed']).optional(),
  /**
   * `separate` (default): the voices of a one-track call are told apart by the voice and named; `line`: by
   * how each utterance sounds, line included (the former method: about a quarter of the CPU, for calls
   * whose speakers differ by their line); `off`: one `mixed`.
   */
  voices: z.enum(['separate', 'line', 'off']).optional(),
});
export type ChannelOptions = z.infer<typeof channelOptionsSchema>;

export const planOptionsSchema = z.object({
  /**
   * `fixed`: sessions as long as the limit allows; `balanced`: lengths chosen from a concurrency budget;
   * `latency`: pieces of the room the account has now (`room`), else `throughputStrategy`.
   */
  strategy: z.enum(PLAN_STRATEGIES).default('fixed'),
  /** latency: the plan when the account has no room (sessions waiting, or fewer than two free). */
  throughputStrategy: z.enum(THROUGHPUT_STRATEGIES).default('balanced'),
  /** latency: no piece shorter than this, unless the track is. */
  latencyMinSessionSeconds: z.number().positive().default(LATENCY_MIN_SESSION_SECONDS),
  /** latency: the account's room when the call is planned; unknown (absent) means no room. */
  room: sessionRoomSchema.optional(),
  maxSessionSeconds: z
    .number()
    .positive()
    .max(SERVICE_MAX_SESSION_SECONDS)
    .default(SERVICE_MAX_SESSION_SECONDS),
  /** How far before the limit (fixed) or around the target (balanced) a silence is looked for. */
  searchWindowSeconds: z.number().positive().default(60),
  /**
   * The loudest silence threshold, dBFS: each channel's own is derived from its noise floor
   * (activities/media/channel-analysis.ts) and never louder than this.
   */
  silenceNoiseDb: z.number().max(0).default(-30),
  /** Shortest silence that counts (0.3 s: no utterance is cut in a gap that long). */
  silenceMinSeconds: z.number().positive().default(0.3),
  /**
   * A silence at least this long is not streamed (activities/media/plan.ts): sessions cover the speech
   * around it, so silence costs no recognition. A track silent all call long is never streamed.
   */
  skipSilenceSeconds: z.number().positive().default(60),
  /** balanced: sessions that can run at once (the account's concurrent sessions). */
  budget: z.number().int().positive().default(LIMIT_DEFAULTS.asrConcurrentSessions),
  /** balanced: no session shorter than this (each session costs a start and a stop), unless the track is. */
  minSessionSeconds: z.number().positive().default(LIMIT_DEFAULTS.minSessionSeconds),
  channels: channelOptionsSchema.default({}),
  /**
   * `file`: each track cut into pieces of at most 58 s in silences, each recognized by one file request
   * (activities/media/file-pieces.ts), stretches with no such silence streamed; `stream`: sessions only.
   */
  recognition: z.enum(SESSION_RECOGNITIONS).default('stream'),
});
export type PlanOptions = z.input<typeof planOptionsSchema>;
export type ResolvedPlanOptions = z.output<typeof planOptionsSchema>;

/**
 * A track staged by the plan (activities/media/staged-tracks.ts): the whole recording's length of the
 * track as 8-kHz mu-law, so that a session is the byte range [start × 8,000, end × 8,000) of it.
 */
const stagedTrackSchema = z.object({
  track: z.number().int().nonnegative(),
  /** Staging key, under the call's audio prefix (deleted with the call's staging). */
  key: z.string().min(1),
  format: z.literal('mulaw'),
  /** Exactly the plan's `durationSeconds` × 8,000. */
  bytes: z.number().int().positive(),
});
export type StagedTrack = z.infer<typeof stagedTrackSchema>;

export const sessionPlanSchema = z.object({
  version: z.literal(1),
  source: z.object({
    path: z.string(),
    fingerprint: z.string(),
    sampleRate: z.number().int().positive(),
    channels: z.number().int().positive(),
    /** Planned length: the decoded length, floored to the millisecond grid. */
    durationSeconds: z.number().positive(),
    /**
     * The decoded length, to the millisecond: the recording's length in its result (absent from plans
     * made before the plan counted it; their probe's `durationSeconds` is that length).
     */
    decodedSeconds: z.number().positive().optional(),
    streamIndex: z.number().int().nonnegative(),
  }),
  options: z.object({
    /** The strategy the sessions were cut by. */
    strategy: z.enum(PLAN_STRATEGIES),
    /** `latency` when a latency plan was asked for (strategy says whether it was used). */
    requestedStrategy: z.literal('latency').optional(),
    /** latency asked for: the account's room it was judged by. */
    room: sessionRoomSchema.optional(),
    maxSessionSeconds: z.number().positive(),
    searchWindowSeconds: z.number().positive(),
    silenceNoiseDb: z.number(),
    silenceMinSeconds: z.number().positive(),
    /** Silences this long were not streamed (absent from plans made before they were skipped). */
    skipSilenceSeconds: z.number().positive().optional(),
    budget: z.number().int().positive().optional(),
    /** balanced and latency: the shortest session (unless a track is shorter). */
    minSessionSeconds: z.number().positive().optional(),
    /** balanced and latency: the session length aimed at. */
    targetSessionSeconds: z.number().positive().optional(),
    /** `file`: the tracks were cut into pieces for file requests (absent: sessions only). */
    recognition: z.enum(SESSION_RECOGNITIONS).optional(),
  }),
  tracks: z.array(trackSchema).min(1),
  /** Empty when the recording holds no speech: nothing to recognize. */
  sessions: z.array(planSessionSchema),
  /** What the analysis found in each source channel (absent from plans made before 0.2.0). */
  channels: z.array(channelFactsSchema).optional(),
  /** What was decided from it, in words: merged duplicates, silent channels left out. */
  decisions: z.array(z.string()).optional(),
  /**
   * The decoded length against the container's timeline the probe read (they agreed within the
   * tolerance, or the plan failed). Absent from plans made before the plan counted the length.
   */
  lengthCheck: lengthCheckSchema.optional(),
  /**
   * The tracks the plan staged, one per track that has sessions (absent when staging was not asked
   * for: a plan made by a test or a benchmark of the planner).
   */
  stagedTracks: z.array(stagedTrackSchema).optional(),
});
export type SessionPlan = z.infer<typeof sessionPlanSchema>;
