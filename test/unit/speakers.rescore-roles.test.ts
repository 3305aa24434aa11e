import { describe, expect, it } from 'vitest';
import { rescoreRoles } from '../../activities/speakers/rescore-roles.ts';
import { roleSettingsOf } from '../../activities/speakers/speakers-activities.ts';
import { defaultRules } from '../../activities/insights/rule-file.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { resultFixture } from '../helpers/result-fixture.ts';

const settings = roleSettingsOf(defaultRules());

/** A stored result of a recorder that put the customer on channel 0: every agent line labelled customer. */
function swappedResult(): ResultDocument {
  const doc = resultFixture({ utterances: 6 });
  const flip = (s: string) => (s === 'agent' ? 'customer' : 'agent');
  return resultDocumentSchema.parse({
    ...doc,
    utterances: doc.utterances.map((u) => ({ ...u, speaker: flip(u.speaker), track: 1 - u.track })),
    talk: { ...doc.talk, bySpeaker: doc.talk.bySpeaker.map((t) => ({ ...t, speaker: flip(t.speaker) })) },
  });
}

describe('rescoreRoles', () => {
  it('swaps the roles of a stored stereo result whose agent lines are on the customer track', () => {
    const before = swappedResult();
    const { doc, changed } = rescoreRoles(before, settings, { mode: 'evidence' });
    expect(changed).toBe(true);
    expect(doc.speakerRoles).toMatchObject({ decision: 'swapped', swapped: true, source: 'channels' });
    // The greeting (utterance 0) is the agent's again, and talk and sentiment follow the names.
    expect(doc.utterances[0]).toMatchObject({ track: 1, speaker: 'agent' });
    const agentTalk = doc.talk.bySpeaker.find((t) => t.speaker === 'agent')!;
    expect(agentTalk.utterances).toBe(3);
    expect(doc.sentiment!.bySpeaker.agent).toEqual(before.sentiment!.bySpeaker.customer);
    expect(() => resultDocumentSchema.parse(doc)).not.toThrow();
  });

  it('keeps the map of a stored result with roles: fixed', () => {
    const { doc, changed } = rescoreRoles(swappedResult(), settings, { mode: 'fixed' });
    expect(changed).toBe(false);
    expect(doc.speakerRoles?.decision).toBe('fixed');
    expect(doc.utterances[0]!.speaker).toBe('customer');
  });

  it('leaves a result that is right as it is', () => {
    const { doc, changed } = rescoreRoles(resultFixture({ utterances: 6 }), settings, { mode: 'evidence' });
    expect(changed).toBe(false);
    expect(doc.speakerRoles?.decision).toBe('configured');
  });
});
