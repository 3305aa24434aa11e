/**
 * The role model: which speaker of a call is the agent, from what each says and when (schemas/speakers.ts).
 *
 * Each candidate (a track, or a voice of a one-track call) collects points for agent and for customer
 * from the rule file's cues (an opening greeting, the company's name, service keigo, identity questions,
 * holds; a customer's own requests), from who speaks first given the call's direction, and, on tracks,
 * from the configured channel map as a prior. The naming with the most points wins; the configured map
 * is overridden only by a margin of `swapMargin` (high confidence), and a margin under `confidentMargin`
 * is reported as low confidence. Pure and deterministic: the speakers stage and `callpipe rescore` run it
 * on the same evidence and get the same roles.
 */
import type {
  Role,
  RoleDecision,
  RoleEvidence,
  RoleSettings,
  SpeakerRole,
  SpeakerRoles,
} from '../../schemas/speakers.ts';
import { PhraseMatcher } from '../insights/text-match.ts';
import { clock } from '../../schemas/units.ts';

interface RoleUtterance {
  start: number;
  text: string;
}

/** A speaker to name: a track of its own, or a voice of a one-track call. */
export interface RoleCandidate {
  track: number;
  /** The voice of a one-track call; null for a track. */
  voice: number | null;
  /** The channel map's name of the track (`agent`, `customer`, …); null for a voice. */
  configured: string | null;
  utterances: readonly RoleUtterance[];
}

export interface RoleModelInput {
  source: 'channels' | 'voices';
  candidates: readonly RoleCandidate[];
  direction: 'inbound' | 'outbound' | null;
  mode: 'evidence' | 'fixed';
  settings: RoleSettings;
}

/** Roles decided: the document's fields, and each candidate's speaker name (same order as the input). */
export interface RoleModelOutput {
  roles: Omit<SpeakerRoles, 'separation'>;
  names: string[];
}

/** Name of a speaker no role could be given (a track that hears everyone, or an untold voice). */
export const UNKNOWN_SPEAKER = 'mixed';

interface Scored {
  candidate: RoleCandidate;
  evidence: RoleEvidence[];
  /** Agent points minus customer points, priors included. */
  agentScore: number;
  /** Points from what was said (cues and company names), both roles. */
  cuePoints: number;
}

interface CompiledCue {
  name: string;
  role: Role;
  weight: number;
  first: number | undefined;
  maxCount: number;
  matcher: PhraseMatcher;
}

function compileCues(settings: RoleSettings): CompiledCue[] {
  const cues: CompiledCue[] = settings.cues.map((c) => ({
    name: c.name,
    role: c.role,
    weight: c.weight,
    first: c.first,
    maxCount: c.maxCount,
    matcher: new PhraseMatcher(c.terms),
  }));
  if (settings.companyNames.length) {
    cues.push({
      name: 'company-name',
      role: 'agent',
      weight: settings.companyNameWeight,
      first: settings.companyNameFirstSeconds,
      maxCount: 1,
      matcher: new PhraseMatcher(settings.companyNames),
    });
  }
  return cues;
}

/** How often each candidate said each cue, and when first. */
function cueCounts(candidates: readonly RoleCandidate[], cues: readonly CompiledCue[]) {
  return candidates.map((candidate) =>
    cues.map((cue) => {
      let count = 0;
      let firstAt: number | null = null;
      for (const u of candidate.utterances) {
        if (cue.first !== undefined && u.start >= cue.first) continue;
        if (!cue.matcher.matches(u.text)) continue;
        count++;
        firstAt ??= u.start;
      }
      return { count, firstAt };
    }),
  );
}

/**
 * Each cue is worth `weight × min(said, maxCount)` in all, shared among the candidates by how often each
 * said it. Shared, not counted per candidate, because a separation that put a few of the agent's
 * utterances with the customer's voice would otherwise hand that voice the agent's strongest cues
 * (the greeting, the identity questions) at full weight, against the few it really holds.
 */
function cueEvidence(candidates: readonly RoleCandidate[], cues: readonly CompiledCue[]): RoleEvidence[][] {
  const counts = cueCounts(candidates, cues);
  const totals = cues.map((_, k) => counts.reduce((n, c) => n + c[k]!.count, 0));
  return counts.map((byCue) =>
    byCue.flatMap(({ count, firstAt }, k) => {
      if (count === 0) return [];
      const cue = cues[k]!;
      const points = round((cue.weight * Math.min(totals[k]!, cue.maxCount) * count) / totals[k]!);
      return [{ cue: cue.name, role: cue.role, count, firstAt, points }];
    }),
  );
}

/** The role a first speaker shows: the agent answers an inbound call, the customer picks up an outbound one. */
function firstSpeakerRole(direction: RoleModelInput['direction']): Role {
  return direction === 'outbound' ? 'customer' : 'agent';
}

function asRole(name: string | null): Role | null {
  return name === 'agent' || name === 'customer' ? name : null;
}

function score(input: RoleModelInput): Scored[] {
  const cues = compileCues(input.settings);
  const firstStart = Math.min(...input.candidates.map((c) => c.utterances[0]?.start ?? Infinity));
  const first =
    input.candidates.length > 1 && Number.isFinite(firstStart)
      ? input.candidates.findIndex((c) => c.utterances[0]?.start === firstStart)
      : -1;
  const said = cueEvidence(input.candidates, cues);
  return input.candidates.map((candidate, i) => {
    const evidence = said[i]!;
    const cuePoints = evidence.reduce((n, e) => n + e.points, 0);
    const { firstSpeakerWeight, configuredWeight } = input.settings;
    if (i === first && firstSpeakerWeight > 0) {
      evidence.push({
        cue: 'first-speaker',
        role: firstSpeakerRole(input.direction),
        count: 1,
        firstAt: firstStart,
        points: firstSpeakerWeight,
      });
    }
    const configured = asRole(candidate.configured);
    if (configured && configuredWeight > 0) {
      evidence.push({
        cue: 'configured',
        role: configured,
        count: 1,
        firstAt: null,
        points: configuredWeight,
      });
    }
    const agentScore = evidence.reduce((n, e) => n + (e.role === 'agent' ? e.points : -e.points), 0);
    return { candidate, evidence, agentScore: round(agentScore), cuePoints };
  });
}

const round = (n: number) => Math.round(n * 100) / 100;

const CUE_WORDS: Record<string, string> = {
  'first-speaker': 'spoke first',
  configured: 'the channel map',
  'company-name': "said the company's name",
};

/** "opening-greeting ×1 at 0:02, service-keigo ×4 from 0:15, spoke first (inbound)". */
function wordsOf(evidence: readonly RoleEvidence[], direction: RoleModelInput['direction']): string {
  if (!evidence.length) return 'no cue';
  return evidence
    .map((e) => {
      if (e.cue === 'configured') return `${CUE_WORDS.configured} says ${e.role}`;
      if (e.cue === 'first-speaker') return `${CUE_WORDS['first-speaker']} (${direction ?? 'inbound'} call)`;
      const at = e.firstAt === null ? '' : ` ${e.count > 1 ? 'from' : 'at'} ${clock(e.firstAt)}`;
      return `${CUE_WORDS[e.cue] ?? e.cue} ×${e.count}${at} (${e.role})`;
    })
    .join(', ');
}

function speakerRole(s: Scored, name: string, role: Role | null, direction: RoleModelInput['direction']) {
  return {
    speaker: name,
    role,
    track: s.candidate.track,
    voice: s.candidate.voice,
    configured: s.candidate.configured,
    utterances: s.candidate.utterances.length,
    agentScore: s.agentScore,
    evidence: s.evidence,
    words: wordsOf(s.evidence, direction),
  } satisfies SpeakerRole;
}

/** Roles of tracks: the channel map stands unless the evidence overturns it with high confidence. */
function decideTracks(input: RoleModelInput, scored: Scored[]): RoleModelOutput {
  const { settings, direction } = input;
  const names = scored.map((s) => s.candidate.configured ?? UNKNOWN_SPEAKER);
  const agent = scored.findIndex((s) => s.candidate.configured === 'agent');
  const customer = scored.findIndex((s) => s.candidate.configured === 'customer');
  const anyCue = scored.some((s) => s.cuePoints > 0);
  const keep = (decision: RoleDecision, margin: number, confidence: 'high' | 'low', summary: string) => ({
    roles: {
      source: 'channels' as const,
      inferred: false,
      decision,
      swapped: false,
      mode: input.mode,
      confidence,
      margin: round(margin),
      direction,
      speakers: scored.map((s, i) => speakerRole(s, names[i]!, asRole(names[i]!), direction)),
      summary,
    },
    names,
  });
  if (agent < 0 || customer < 0 || scored.length !== 2) {
    return keep('configured', 0, anyCue ? 'high' : 'low', 'speakers as the channel map names them');
  }
  // Positive: the evidence agrees with the map (its own prior included).
  const margin = scored[agent]!.agentScore - scored[customer]!.agentScore;
  if (input.mode === 'fixed') {
    const against =
      margin <= -settings.swapMargin ? '; the evidence says the roles are the other way round' : '';
    return keep(
      'fixed',
      margin,
      margin >= settings.confidentMargin ? 'high' : 'low',
      `roles fixed by the channel map${against}`,
    );
  }
  if (margin <= -settings.swapMargin) {
    const swapped = names.map((n) => (n === 'agent' ? 'customer' : n === 'customer' ? 'agent' : n));
    const channelOf = (i: number) => `track ${scored[i]!.candidate.track}`;
    return {
      roles: {
        source: 'channels',
        inferred: false,
        decision: 'swapped',
        swapped: true,
        mode: input.mode,
        confidence: 'high',
        margin: round(-margin),
        direction,
        speakers: scored.map((s, i) => speakerRole(s, swapped[i]!, asRole(swapped[i]!), direction)),
        summary:
          `roles swapped against the channel map: ${channelOf(customer)} is the agent and ` +
          `${channelOf(agent)} the customer (margin ${round(-margin)} points)`,
      },
      names: swapped,
    };
  }
  if (!anyCue || margin < settings.confidentMargin) {
    return keep(
      'low-confidence',
      margin,
      'low',
      anyCue
        ? `low confidence: the evidence is weak (margin ${round(margin)}); the channel map stands`
        : 'low confidence: nothing said tells the roles; the channel map stands',
    );
  }
  return keep('configured', margin, 'high', `the channel map is confirmed (margin ${round(margin)} points)`);
}

/** Roles of voices: the most agent-like is the agent; with more than two, the least is the customer. */
function decideVoices(input: RoleModelInput, scored: Scored[]): RoleModelOutput {
  const { settings, direction } = input;
  const anyCue = scored.some((s) => s.cuePoints > 0);
  const base = { source: 'voices' as const, inferred: true, swapped: false, mode: input.mode, direction };
  if (scored.length === 1) {
    const s = scored[0]!;
    // One voice that says both an agent's and a customer's lines is two people the separation could not
    // tell apart: `mixed`, so that nothing is counted for one role that the other said.
    const said = (role: Role) =>
      s.evidence
        .filter((e) => e.role === role && e.cue !== 'first-speaker' && e.cue !== 'configured')
        .reduce((n, e) => n + e.points, 0);
    if (said('agent') >= settings.confidentMargin && said('customer') >= settings.confidentMargin) {
      return {
        roles: {
          ...base,
          decision: 'low-confidence',
          confidence: 'low',
          margin: 0,
          speakers: [speakerRole(s, UNKNOWN_SPEAKER, null, direction)],
          summary:
            "one voice found, but it says both an agent's and a customer's lines: the voices could not be " +
            'told apart, so no utterance is given a role',
        },
        names: [UNKNOWN_SPEAKER],
      };
    }
    const role: Role | null =
      s.cuePoints > 0 && s.agentScore !== 0 ? (s.agentScore > 0 ? 'agent' : 'customer') : null;
    const name = role ?? UNKNOWN_SPEAKER;
    const strong = Math.abs(s.agentScore) >= settings.confidentMargin;
    return {
      roles: {
        ...base,
        decision: role ? (strong ? 'inferred' : 'low-confidence') : 'unknown',
        confidence: role && strong ? 'high' : 'low',
        margin: round(Math.abs(s.agentScore)),
        speakers: [speakerRole(s, name, role, direction)],
        summary: role
          ? `one voice, ${strong ? '' : 'with low confidence '}the ${role}`
          : 'one voice; nothing said tells its role',
      },
      names: [name],
    };
  }
  // Ties go to the voice heard first: the agent answers an inbound call.
  const order = scored.map((s, i) => ({ s, i })).sort((a, b) => b.s.agentScore - a.s.agentScore || a.i - b.i);
  const roleOf = new Map<number, Role>();
  if (scored.length === 2) {
    roleOf.set(order[0]!.i, 'agent');
    roleOf.set(order[1]!.i, 'customer');
  } else {
    // A transfer: one customer, the agents they were passed between.
    order.forEach(({ i }, k) => roleOf.set(i, k === order.length - 1 ? 'customer' : 'agent'));
  }
  const customerAt = order.length - 1;
  const margin = order[customerAt - 1]!.s.agentScore - order[customerAt]!.s.agentScore;
  const strong = anyCue && margin >= settings.confidentMargin;
  const names = scored.map((_, i) => roleOf.get(i)!);
  return {
    roles: {
      ...base,
      decision: strong ? 'inferred' : 'low-confidence',
      confidence: strong ? 'high' : 'low',
      margin: round(margin),
      speakers: scored.map((s, i) => speakerRole(s, names[i]!, names[i] as Role, direction)),
      summary:
        `${scored.length} voices told apart by sound; ` +
        (strong
          ? `named by what they say (margin ${round(margin)} points)`
          : anyCue
            ? `low confidence: the evidence is weak (margin ${round(margin)})`
            : 'low confidence: nothing said tells the roles, the voice heard first is taken for the agent'),
    },
    names,
  };
}

export function decideRoles(input: RoleModelInput): RoleModelOutput {
  const scored = score(input);
  if (!scored.length) {
    return {
      roles: {
        source: input.source,
        inferred: input.source === 'voices',
        decision: 'unknown',
        swapped: false,
        mode: input.mode,
        confidence: 'low',
        margin: 0,
        direction: input.direction,
        speakers: [],
        summary: 'no speech',
      },
      names: [],
    };
  }
  return input.source === 'channels' ? decideTracks(input, scored) : decideVoices(input, scored);
}
