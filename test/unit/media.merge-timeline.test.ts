import { describe, expect, it } from 'vitest';
import { createMergeActivities, mergeSessions } from '../../activities/media/merge-activities.ts';
import type { SessionResult } from '../../activities/asr/asr-activities.ts';
import { timelineSchema } from '../../schemas/transcript.ts';
import { MemoryStore } from './nlp.helpers.ts';

function result(session: number, utterances: SessionResult['utterances'], restartReasons: string[] = []) {
  return {
    session,
    start: 0,
    end: 100,
    utterances,
    audioSecondsSent: 100,
    restarts: restartReasons.length,
    reStreamedSeconds: 0,
    requests: 10,
    restartReasons,
  } satisfies SessionResult;
}

const customer = { session: 1, track: 1, speaker: 'customer', resultKey: 's/sessions/0001.json' };
const agent = { session: 0, track: 0, speaker: 'agent', resultKey: 's/sessions/0000.json' };

describe('mergeSessions', () => {
  it('orders utterances by start across tracks, names the service’s score `confidence`, keeps restart reasons', () => {
    const timeline = mergeSessions('call-1', 100, [
      {
        ref: customer,
        result: result(1, [{ start: 3, end: 4, text: 'はい', score: 0.8 }], ['session error: reset']),
      },
      { ref: agent, result: result(0, [{ start: 1, end: 2, text: 'もしもし' }]) },
    ]);
    expect(timeline.speakers).toEqual(['agent', 'customer']);
    expect(timeline.utterances).toEqual([
      { index: 0, speaker: 'agent', track: 0, session: 0, start: 1, end: 2, text: 'もしもし' },
      {
        index: 1,
        speaker: 'customer',
        track: 1,
        session: 1,
        start: 3,
        end: 4,
        text: 'はい',
        confidence: 0.8,
      },
    ]);
    expect(timeline.sessions).toEqual([
      { session: 0, restartReasons: [] },
      { session: 1, restartReasons: ['session error: reset'] },
    ]);
  });

  it('the activity reads the staged session results and stages the timeline', async () => {
    const store = new MemoryStore();
    store.objects.set(agent.resultKey, JSON.stringify(result(0, [{ start: 1, end: 2, text: 'a' }])));
    store.objects.set(customer.resultKey, JSON.stringify(result(1, [], ['x', 'y'])));
    const { mergeTimeline } = createMergeActivities({ store });
    const out = await mergeTimeline({
      callId: 'call-1',
      durationSeconds: 100,
      sessions: [agent, customer],
      timelineKey: 's/timeline.json',
    });
    expect(out).toEqual({ timelineKey: 's/timeline.json', utterances: 1, speakers: ['agent', 'customer'] });
    const staged = timelineSchema.parse(store.json('s/timeline.json'));
    expect(staged.sessions).toEqual([
      { session: 0, restartReasons: [] },
      { session: 1, restartReasons: ['x', 'y'] },
    ]);
  });
});
