/**
 * Who said what: the roles of a call's speakers and the evidence for them (docs/results.md, "Speakers").
 *
 * A speaker is a track (stereo: one per channel) or, on a one-track call, a *voice*: the utterances the
 * voice separation (activities/speakers/voice-separation.ts) put together. The role model
 * (activities/speakers/role-model.ts) scores each speaker as agent against customer from cues of the rule
 * file (`roles`, below) and from when they speak; this document says what it decided and why. Cue names,
 * counts and times only: never a word of what was said, so it holds no personal data.
 */
import { z } from 'zod';

const ROLES = ['agent', 'customer'] as const;
const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** Bounds of a rule file's role cues: a user's file cannot make the model slow. */
const ROLE_CUE_LIMITS = { cues: 100, termsPerCue: 200, termLength: 200, companyNames: 50 } as const;

const cueName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, _ . - (shown in result.json)');

const roleCueSchema = z
  .object({
    name: cueName,
    role: roleSchema.describe('the role a speaker who says these shows'),
    terms: z
      .array(z.string().min(1).max(ROLE_CUE_LIMITS.termLength))
      .min(1)
      .max(ROLE_CUE_LIMITS.termsPerCue)
      .describe('matched as phrase rules match (width, kana, spaces and punctuation folded)'),
    weight: z.number().positive().max(10).default(1).describe('evidence per utterance that holds a term'),
    first: z
      .number()
      .positive()
      .optional()
      .describe('count only utterances that start in the first N seconds of the call (an opening line)'),
    maxCount: z
      .number()
      .int()
      .positive()
      .max(100)
      .default(3)
      .describe('utterances counted at most: a talkative speaker is not ten times the evidence'),
  })
  .strict()
  .meta({ id: 'RoleCue' });

export const roleSettingsSchema = z
  .object({
    companyNames: z
      .array(z.string().min(1).max(ROLE_CUE_LIMITS.termLength))
      .max(ROLE_CUE_LIMITS.companyNames)
      .default([])
      .describe("the deployment's company and department names: said in the opening, they mark the agent"),
    companyNameWeight: z.number().positive().max(10).default(3),
    companyNameFirstSeconds: z.number().positive().default(60),
    cues: z.array(roleCueSchema).max(ROLE_CUE_LIMITS.cues).default([]),
    firstSpeakerWeight: z
      .number()
      .min(0)
      .max(10)
      .default(1)
      .describe(
        'who speaks first: the agent on an inbound call, the customer (who picks up) on an outbound one; ' +
          "direction from the manifest's `direction` column, inbound when unknown",
      ),
    configuredWeight: z
      .number()
      .min(0)
      .max(10)
      .default(1)
      .describe('the configured channel map (channel 0 agent, or plan.channels.speakers) as a prior'),
    swapMargin: z
      .number()
      .positive()
      .default(4)
      .describe('evidence against the configured map needed to swap it (high confidence)'),
    confidentMargin: z
      .number()
      .positive()
      .default(2)
      .describe('below this margin the roles are reported as low confidence'),
  })
  .strict()
  .refine((s) => s.confidentMargin <= s.swapMargin, 'confidentMargin must not exceed swapMargin')
  .meta({ id: 'RoleSettings' });
export type RoleSettings = z.output<typeof roleSettingsSchema>;

/** One cue as found in one speaker's utterances. */
const roleEvidenceSchema = z
  .object({
    cue: z
      .string()
      .min(1)
      .describe('the cue of the rule file, `company-name`, `first-speaker` or `configured`'),
    role: roleSchema,
    count: z.number().int().nonnegative(),
    /** Start of the first utterance that held it, seconds; null for the priors. */
    firstAt: z.number().nonnegative().nullable(),
    points: z.number().describe('weight × counted utterances'),
  })
  .meta({ id: 'RoleEvidence' });
export type RoleEvidence = z.infer<typeof roleEvidenceSchema>;

const speakerRoleSchema = z
  .object({
    speaker: z.string().min(1).describe("the speaker's name in utterances[].speaker"),
    role: roleSchema.nullable().describe('null when nothing tells the role'),
    track: z.number().int().nonnegative(),
    /** The voice of a one-track call (0 = heard first); null for a track of its own. */
    voice: z.number().int().nonnegative().nullable(),
    /** What the channel map named this track before the evidence; null for a voice. */
    configured: z.string().nullable(),
    utterances: z.number().int().nonnegative(),
    /** Agent points minus customer points of this speaker. */
    agentScore: z.number(),
    evidence: z.array(roleEvidenceSchema),
    words: z.string().describe('the evidence in words, for people'),
  })
  .meta({ id: 'SpeakerRole' });
export type SpeakerRole = z.infer<typeof speakerRoleSchema>;

/** How the roles were decided, as the night report and the `CallpipeRoles` search attribute count it. */
const ROLE_DECISIONS = [
  /** the configured channel map, confirmed by the evidence */
  'configured',
  /** the configured channel map contradicted with high confidence: the roles were swapped */
  'swapped',
  /** kept as configured (`plan.channels.roles: fixed`), whatever the evidence */
  'fixed',
  /** voices of a one-track call named by the evidence */
  'inferred',
  /** the evidence was weak: the configured map (or the likeliest naming of voices) stands */
  'low-confidence',
  /** nothing could be told: one `mixed` speaker, or speakers named as configured with no cue at all */
  'unknown',
] as const;
const roleDecisionSchema = z.enum(ROLE_DECISIONS);
export type RoleDecision = z.infer<typeof roleDecisionSchema>;

/** The voice separation of a one-track call. */
const separationFactsSchema = z
  .object({
    voices: z.number().int().nonnegative().describe('voices found (0 when nothing could be told)'),
    /** Utterances in which the recognizer joined two voices, left to the one holding most of each. */
    joined: z.number().int().nonnegative(),
    /** Utterances no voice could be given (left `mixed`). */
    unassigned: z.number().int().nonnegative(),
    reason: z.string().optional(),
    cpuMs: z.number().nonnegative(),
  })
  .meta({ id: 'SeparationFacts' });
export type SeparationFacts = z.infer<typeof separationFactsSchema>;

export const speakerRolesSchema = z
  .object({
    /** `channels`: a track per speaker; `voices`: one track separated by voice (speakers inferred). */
    source: z.enum(['channels', 'voices']),
    /** Speakers told apart by voice: every speaker-scoped figure of this call rests on the separation. */
    inferred: z.boolean(),
    decision: roleDecisionSchema,
    /** The configured channel map was overridden by the evidence. */
    swapped: z.boolean(),
    /** `evidence` (default) or `fixed` (plan.channels.roles). */
    mode: z.enum(['evidence', 'fixed']),
    confidence: z.enum(['high', 'low']),
    /** Evidence for the naming chosen over the other naming, points (0 when there is one candidate). */
    margin: z.number(),
    direction: z.enum(['inbound', 'outbound']).nullable(),
    speakers: z.array(speakerRoleSchema),
    separation: separationFactsSchema.optional(),
    /** What was decided, in words. */
    summary: z.string(),
  })
  .meta({ id: 'SpeakerRoles' });
export type SpeakerRoles = z.infer<typeof speakerRolesSchema>;

/** The speakers stage's staged document (call-keys `speakers`): what publish copies into result.json. */
export const SPEAKERS_DOCUMENT_VERSION = 1;
export const speakersDocumentSchema = z.object({
  version: z.literal(SPEAKERS_DOCUMENT_VERSION),
  callId: z.string().min(1),
  roles: speakerRolesSchema,
});
