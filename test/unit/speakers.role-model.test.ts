import { describe, expect, it } from 'vitest';
import { decideRoles, type RoleCandidate } from '../../activities/speakers/role-model.ts';
import { assignTrackRoles, roleSettingsOf } from '../../activities/speakers/speakers-activities.ts';
import { defaultRules, parseRules } from '../../activities/insights/rule-file.ts';
import type { Timeline } from '../../schemas/transcript.ts';
import type { Track } from '../../schemas/plan.ts';

const settings = roleSettingsOf(defaultRules());

// Lines of the default phrasebook (emulator/phrasebook.ja.json).
const AGENT_LINES = [
  'お電話ありがとうございます。カスタマーセンターの佐藤でございます。',
  '恐れ入りますが、お名前をフルネームでお伺いできますか。',
  '確認いたしますので、少々お待ちいただけますでしょうか。',
  'ご迷惑をおかけして大変申し訳ございません。',
];
const CUSTOMER_LINES = [
  'えーっと、請求書のことで電話したんですが。',
  '山田太郎です。',
  '正直、すごく困ってるんです。',
  'はい、わかりました。',
];

/** A conversation that takes turns, agent lines on `agentTrack`, starting with whoever `first` names. */
function conversation(
  agentTrack: number,
  options: { greeting?: boolean; first?: 'agent' | 'customer' } = {},
) {
  const { greeting = true, first = 'agent' } = options;
  const agent = greeting ? AGENT_LINES : AGENT_LINES.slice(1);
  const turns: { track: number; text: string }[] = [];
  const customerTrack = 1 - agentTrack;
  for (let i = 0; i < 4; i++) {
    const a = agent[i] ? [{ track: agentTrack, text: agent[i]! }] : [];
    const c = [{ track: customerTrack, text: CUSTOMER_LINES[i]! }];
    turns.push(...(first === 'agent' ? [...a, ...c] : [...c, ...a]));
  }
  return turns.map((t, i) => ({ ...t, start: 1 + i * 5, end: 4 + i * 5 }));
}

function timelineOf(
  turns: { track: number; text: string; start: number; end: number }[],
  tracks: Track[],
): Timeline {
  return {
    callId: 'c',
    durationSeconds: 60,
    speakers: tracks.map((t) => t.speaker),
    utterances: turns.map((t, index) => ({
      index,
      speaker: tracks[t.track]!.speaker,
      track: t.track,
      session: t.track,
      start: t.start,
      end: t.end,
      text: t.text,
    })),
  };
}

const STEREO: Track[] = [
  { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
  { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
];

describe('role model on a track per speaker', () => {
  it('confirms the channel map when the agent is on channel 0', () => {
    const { roles, timeline } = assignTrackRoles(timelineOf(conversation(0), STEREO), STEREO, settings, {
      roles: 'evidence',
    });
    expect(roles.decision).toBe('configured');
    expect(roles.swapped).toBe(false);
    expect(roles.confidence).toBe('high');
    expect(timeline.utterances.filter((u) => u.track === 0).every((u) => u.speaker === 'agent')).toBe(true);
    const agent = roles.speakers.find((s) => s.speaker === 'agent')!;
    expect(agent.evidence.map((e) => e.cue)).toEqual(
      expect.arrayContaining(['opening-greeting', 'service-keigo', 'identity-question', 'first-speaker']),
    );
    expect(agent.words).toMatch(/opening-greeting ×1 at 0:01/);
  });

  it('swaps the map when the customer is on channel 0, and says so', () => {
    const { roles, timeline } = assignTrackRoles(timelineOf(conversation(1), STEREO), STEREO, settings, {
      roles: 'evidence',
    });
    expect(roles.decision).toBe('swapped');
    expect(roles.swapped).toBe(true);
    expect(roles.summary).toMatch(/track 1 is the agent/);
    expect(timeline.utterances.filter((u) => u.track === 1).every((u) => u.speaker === 'agent')).toBe(true);
    expect(timeline.utterances.filter((u) => u.track === 0).every((u) => u.speaker === 'customer')).toBe(
      true,
    );
    expect(roles.speakers.find((s) => s.track === 1)).toMatchObject({
      speaker: 'agent',
      configured: 'customer',
    });
  });

  it('swaps without a greeting too, from keigo and identity questions (outbound: the customer speaks first)', () => {
    const turns = conversation(1, { greeting: false, first: 'customer' });
    const { roles } = assignTrackRoles(timelineOf(turns, STEREO), STEREO, settings, {
      roles: 'evidence',
      direction: 'outbound',
    });
    expect(roles.decision).toBe('swapped');
    expect(roles.direction).toBe('outbound');
  });

  it('keeps the map with roles: fixed, and records that the evidence disagrees', () => {
    const { roles, timeline } = assignTrackRoles(timelineOf(conversation(1), STEREO), STEREO, settings, {
      roles: 'fixed',
    });
    expect(roles.decision).toBe('fixed');
    expect(roles.swapped).toBe(false);
    expect(roles.summary).toMatch(/other way round/);
    expect(timeline.utterances.filter((u) => u.track === 0).every((u) => u.speaker === 'agent')).toBe(true);
  });

  it('never swaps on weak evidence: the map stands with low confidence', () => {
    const turns = [
      { track: 0, text: 'はい。', start: 1, end: 2 },
      { track: 1, text: 'お電話ありがとうございます。', start: 3, end: 5 },
    ];
    const { roles, timeline } = assignTrackRoles(timelineOf(turns, STEREO), STEREO, settings, {
      roles: 'evidence',
    });
    expect(roles.decision).toBe('low-confidence');
    expect(roles.confidence).toBe('low');
    expect(timeline.utterances[0]!.speaker).toBe('agent');
  });

  it("takes the deployment's company name as the strongest opening cue", () => {
    const withCompany = parseRules(
      `format: 1\nname: t\nversion: '1'\nroles:\n  companyNames: [ミライ通信]\n  cues: []\n`,
      'rules.yaml',
    );
    const turns = [
      { track: 1, text: 'はい、ミライ通信の窓口です。', start: 1, end: 3 },
      { track: 0, text: 'あ、もしもし。', start: 4, end: 5 },
    ];
    const { roles } = assignTrackRoles(timelineOf(turns, STEREO), STEREO, roleSettingsOf(withCompany), {
      roles: 'evidence',
    });
    // 3 (company) + 0 on track 1; the map's prior (1) and first speaker (1) on track 0: margin 3 - 2 = 1 < 4.
    expect(roles.decision).toBe('low-confidence');
    expect(roles.speakers.find((s) => s.track === 1)!.evidence[0]).toMatchObject({
      cue: 'company-name',
      count: 1,
    });
  });
});

const voices = (agentVoice: number): RoleCandidate[] => {
  const turns = conversation(agentVoice);
  return [0, 1].map((voice) => ({
    track: 0,
    voice,
    configured: null,
    utterances: turns.filter((t) => t.track === voice),
  }));
};

describe('role model on voices of a one-track call: two voices', () => {
  it('names the voice that greets and uses keigo the agent, whichever was heard first', () => {
    for (const agentVoice of [0, 1]) {
      const { roles, names } = decideRoles({
        source: 'voices',
        candidates: voices(agentVoice),
        direction: null,
        mode: 'evidence',
        settings,
      });
      expect(names[agentVoice]).toBe('agent');
      expect(names[1 - agentVoice]).toBe('customer');
      expect(roles).toMatchObject({ decision: 'inferred', inferred: true, confidence: 'high' });
    }
  });

  it('is not misled by a few agent utterances the separation put with the customer', () => {
    const at = (start: number, text: string) => ({ start, text });
    // The customer's voice holds two identity questions and two apologies by mistake, then its own lines;
    // counted per voice, those would make it the agent (capped keigo 4 + identity 4 + first 1 − 4).
    const customerVoice = [
      at(0.5, AGENT_LINES[1]!),
      at(4, AGENT_LINES[3]!),
      at(8, AGENT_LINES[1]!),
      at(12, AGENT_LINES[3]!),
      ...Array.from({ length: 12 }, (_, i) => at(20 + i * 8, CUSTOMER_LINES[i % 3]!)),
    ];
    const agentVoice = Array.from({ length: 12 }, (_, i) => at(24 + i * 8, AGENT_LINES[3]!));
    const { names, roles } = decideRoles({
      source: 'voices',
      candidates: [
        { track: 0, voice: 0, configured: null, utterances: customerVoice },
        { track: 0, voice: 1, configured: null, utterances: agentVoice },
      ],
      direction: null,
      mode: 'evidence',
      settings,
    });
    expect(names).toEqual(['customer', 'agent']);
    // Keigo said 16 times, 4 of them by voice 0: it gets a quarter of the cue's 4 points.
    expect(roles.speakers[0]!.evidence.find((e) => e.cue === 'service-keigo')).toMatchObject({
      count: 4,
      points: 1,
    });
  });

  it('says low confidence when nothing said tells the roles', () => {
    const { roles, names } = decideRoles({
      source: 'voices',
      candidates: [
        { track: 0, voice: 0, configured: null, utterances: [{ start: 0, text: 'はい。' }] },
        { track: 0, voice: 1, configured: null, utterances: [{ start: 2, text: 'ええ。' }] },
      ],
      direction: null,
      mode: 'evidence',
      settings,
    });
    expect(roles.decision).toBe('low-confidence');
    expect(roles.summary).toMatch(/nothing said tells the roles/);
    expect(names).toEqual(['agent', 'customer']);
  });
});

describe('role model on voices of a one-track call: one voice and three', () => {
  it('names one voice by its cues, or leaves it mixed when nothing tells', () => {
    const agentOnly = decideRoles({
      source: 'voices',
      candidates: [
        { track: 0, voice: 0, configured: null, utterances: conversation(0).filter((t) => t.track === 0) },
      ],
      direction: null,
      mode: 'evidence',
      settings,
    });
    expect(agentOnly.names).toEqual(['agent']);
    const silent = decideRoles({
      source: 'voices',
      candidates: [{ track: 0, voice: 0, configured: null, utterances: [{ start: 0, text: '〈不明〉' }] }],
      direction: null,
      mode: 'evidence',
      settings,
    });
    expect(silent.names).toEqual(['mixed']);
    expect(silent.roles.decision).toBe('unknown');
  });

  it("leaves one voice that says both roles' lines mixed, with low confidence: two people not told apart", () => {
    const both = decideRoles({
      source: 'voices',
      candidates: [{ track: 0, voice: 0, configured: null, utterances: conversation(0) }],
      direction: null,
      mode: 'evidence',
      settings,
    });
    expect(both.names).toEqual(['mixed']);
    expect(both.roles.decision).toBe('low-confidence');
    expect(both.roles.confidence).toBe('low');
    expect(both.roles.speakers[0]!.role).toBeNull();
    expect(both.roles.summary).toMatch(/could not be told apart/);
  });

  it('on a transfer (three voices) names the least agent-like the customer and the others agents', () => {
    const turns = conversation(0);
    const { names } = decideRoles({
      source: 'voices',
      candidates: [
        { track: 0, voice: 0, configured: null, utterances: turns.filter((t) => t.track === 0).slice(0, 2) },
        { track: 0, voice: 1, configured: null, utterances: turns.filter((t) => t.track === 1) },
        { track: 0, voice: 2, configured: null, utterances: turns.filter((t) => t.track === 0).slice(2) },
      ],
      direction: null,
      mode: 'evidence',
      settings,
    });
    expect(names).toEqual(['agent', 'customer', 'agent']);
  });
});

describe('role cues in a rule file', () => {
  it('are bounded: a cue with too many terms is refused when the file is read', () => {
    const terms = Array.from({ length: 201 }, (_, i) => `t${i}`).join(', ');
    expect(() =>
      parseRules(
        `format: 1\nname: t\nversion: '1'\nroles:\n  cues:\n    - { name: x, role: agent, terms: [${terms}] }\n`,
        'rules.yaml',
      ),
    ).toThrow(/rules.yaml: line \d+: roles.cues.0.terms/);
  });
});
