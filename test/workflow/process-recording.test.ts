import { ApplicationFailure } from '@temporalio/common';
/**
 * processRecording's branches with mocked activities on the project's dev server: what the activities
 * were asked to do, what the workflow returned, its search attributes and its `progress` query.
 */
import { describe, expect, it } from 'vitest';
import { Context } from '@temporalio/activity';
import { CancelledFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  processRecording,
  progressQuery,
  type ProcessRecordingResult,
} from '../../workflows/process-recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import {
  CALL_SECONDS,
  STEP_COST,
  UTTERANCES_PER_SESSION,
  useTestEnv,
  failedStep,
  mockActivities,
  nonRetryable,
  pick,
  probeResult,
  processInput,
  searchAttribute,
  uniqueQueue,
  waitFor,
  withWorker,
  type CallOverrides,
  type Mocks,
} from './helpers.ts';

const testEnv = useTestEnv();

interface Run {
  handle: WorkflowHandle<typeof processRecording>;
  result: ProcessRecordingResult;
  callId: string;
}

/** Runs one call to its end on a queue of its own, with `mocks` as every activity. */
async function runCall(
  name: string,
  mocks: Mocks,
  overrides: CallOverrides = {},
): Promise<Run & { stage: unknown; outcome: unknown; progress: Awaited<ReturnType<typeof queryProgress>> }> {
  const taskQueue = uniqueQueue(name);
  const callId = `${name}-3f9a0c1e`;
  return withWorker(testEnv(), taskQueue, mocks.activities, async () => {
    const handle = await testEnv().client.workflow.start(processRecording, {
      taskQueue,
      workflowId: `process-${taskQueue}`,
      args: [processInput(taskQueue, callId, overrides)],
    });
    const result = await handle.result();
    return {
      handle,
      result,
      callId,
      stage: await searchAttribute(handle, SEARCH_ATTRIBUTE_KEYS.stage),
      outcome: await searchAttribute(handle, SEARCH_ATTRIBUTE_KEYS.outcome),
      // Queried after the end: the worker replays the history to answer.
      progress: await queryProgress(handle),
    };
  });
}

function queryProgress(handle: WorkflowHandle<typeof processRecording>) {
  return handle.query(progressQuery);
}

/** The one call of `activity` whose input is the interesting one (fails when called more or less). */
function onlyInput(mocks: Mocks, activity: Parameters<Mocks['callsOf']>[0]): unknown {
  expect(mocks[activity]).toHaveBeenCalledTimes(1);
  return mocks[activity].mock.calls[0]![0];
}

describe('processRecording with mocked activities: probe, plan and recognize', () => {
  it('a recording the probe refuses fails at `probe`: error.json with the reason, status and outcome failed', async () => {
    const reason = 'cannot decode s3://calls/2024/11/22/probe-3f9a0c1e.wav: moov atom not found';
    const mocks = mockActivities({
      probeSource: async () => {
        throw nonRetryable('MediaError', reason);
      },
    });
    const { result, callId, stage, outcome, progress } = await runCall('probe', mocks);

    expect(result).toMatchObject({ callId, status: 'failed', stage: 'probe' });
    expect(result.reason).toContain('moov atom not found');
    expect(result.errorKey).toMatch(new RegExp(`${callId}/error\\.json$`));
    // Non-retryable: one attempt, and nothing after the probe but the error document.
    expect(mocks.probeSource).toHaveBeenCalledTimes(1);
    const written = onlyInput(mocks, 'writeError');
    expect(pick(written, 'callId')).toBe(callId);
    expect(pick(written, 'stage')).toBe('probe');
    expect(String(pick(written, 'reason'))).toContain('moov atom not found');
    for (const later of ['planSource', 'recognizeSession', 'publishResult'] as const) {
      expect(mocks[later]).not.toHaveBeenCalled();
    }
    expect(outcome).toBe('failed');
    expect(stage).toBe('failed');
    expect(progress).toMatchObject({ callId, stage: 'failed', sessionsTotal: 0 });
  });

  it('a session whose restart budget is used up fails the call at `recognize`', async () => {
    const reason = 'session 1: 3 restarts used up (last: 550 No Resource at 41.2 s)';
    const mocks = mockActivities();
    const succeed = mocks.recognizeSession.getMockImplementation()!;
    mocks.recognizeSession.mockImplementation(async (input) => {
      if (pick(input, 'session') === 1) throw nonRetryable('RecognitionRestartsExhausted', reason);
      return succeed(input);
    });
    const { result, callId, outcome, progress } = await runCall('restarts', mocks, { maxRestarts: 3 });

    expect(result).toMatchObject({ callId, status: 'failed', stage: 'recognize', reason });
    expect(result.durationSeconds).toBe(CALL_SECONDS);
    // Each session recognized once (the exhausted budget is not retried), with the call's budget.
    expect(mocks.recognizeSession).toHaveBeenCalledTimes(2);
    for (const [input] of mocks.recognizeSession.mock.calls) expect(pick(input, 'maxRestarts')).toBe(3);
    const written = onlyInput(mocks, 'writeError');
    expect(pick(written, 'callId')).toBe(callId);
    expect(pick(written, 'stage')).toBe('recognize');
    expect(pick(written, 'reason')).toBe(reason);
    expect(mocks.mergeTimeline).not.toHaveBeenCalled();
    expect(mocks.publishResult).not.toHaveBeenCalled();
    expect(outcome).toBe('failed');
    expect(progress).toMatchObject({ stage: 'failed', sessionsTotal: 2, sessionsTranscoded: 2 });
  });

  it('the plan stages the tracks: each session streams its range of its track', async () => {
    const mocks = mockActivities();
    const { result, progress } = await runCall('tracks', mocks);
    expect(result.status).toBe('done');
    const plan = onlyInput(mocks, 'planSource');
    const audioPrefix = pick(plan, 'stageTracksUnder') as string;
    // Under the call's own staging, which its clean-up deletes.
    expect(audioPrefix).toMatch(/\/audio\/$/);
    const cleaned = pick(onlyInput(mocks, 'deleteStaging'), 'prefixes') as string[];
    expect(cleaned.some((p) => audioPrefix.startsWith(p))).toBe(true);
    const sessions = mocks.recognizeSession.mock.calls.map(([input]) => ({
      session: pick(input, 'session'),
      audioKey: pick(input, 'audioKey'),
      audioStart: pick(input, 'audioStart'),
    }));
    expect(sessions.sort((a, b) => Number(a.session) - Number(b.session))).toEqual([
      { session: 0, audioKey: `${audioPrefix}${probeResult().fingerprint}/t0/track.mulaw`, audioStart: 0 },
      { session: 1, audioKey: `${audioPrefix}${probeResult().fingerprint}/t1/track.mulaw`, audioStart: 0 },
    ]);
    expect(progress).toMatchObject({ sessionsTotal: 2, sessionsTranscoded: 2, sessionsRecognized: 2 });
  });

  it('a recording with no speech (a plan of no session) stages and streams nothing, and is done', async () => {
    const mocks = mockActivities();
    const plan = mocks.planSource.getMockImplementation()!;
    mocks.planSource.mockImplementation(async (input) => ({
      ...((await plan(input)) as object),
      sessions: [],
    }));
    const { result, outcome } = await runCall('no-speech', mocks);

    expect(result).toMatchObject({ status: 'done', sessions: 0 });
    expect(mocks.recognizeSession).not.toHaveBeenCalled();
    expect(pick(onlyInput(mocks, 'mergeTimeline'), 'sessions')).toEqual([]);
    expect(mocks.publishResult).toHaveBeenCalledTimes(1);
    expect(outcome).toBe('done');
  });
});

describe('processRecording with mocked activities: text steps and tables', () => {
  it('a text step that fails makes the call partial: result.json written with the step failure', async () => {
    const reason = 'summary refused: text has fewer than 2 sentences (invalid)';
    const mocks = mockActivities({ summarizeCall: async () => failedStep(reason) });
    const { result, callId, stage, outcome } = await runCall('partial', mocks);

    expect(result).toMatchObject({
      callId,
      status: 'partial',
      stepFailures: [{ step: 'summary', reason }],
    });
    expect(result.resultKey).toMatch(new RegExp(`${callId}/result\\.json$`));
    // The other text steps went on, and the writer was told which step failed and why.
    expect(mocks.analyzeSentiment).toHaveBeenCalledTimes(1);
    expect(mocks.extractKeywords).toHaveBeenCalledTimes(1);
    const written = onlyInput(mocks, 'publishResult');
    expect(pick(written, 'callId')).toBe(callId);
    expect(pick(written, 'stepFailures')).toEqual([{ step: 'summary', reason }]);
    // The sessions go once, with their counters: the plan's own list stays out of the history's input.
    const facts = pick(written, 'facts') as { plan: object; sessions: unknown[] };
    expect(facts.plan).toHaveProperty('tracks');
    expect(facts.plan).not.toHaveProperty('sessions');
    expect(facts.sessions.length).toBeGreaterThan(0);
    expect(mocks.writeError).not.toHaveBeenCalled();
    expect(mocks.deleteStaging).toHaveBeenCalledTimes(1);
    expect(outcome).toBe('partial');
    expect(stage).toBe('done');
  });

  it("a done call's rows go to the analysis tables after its result.json, in the output bucket's tables/", async () => {
    const mocks = mockActivities();
    const { result, callId } = await runCall('tables', mocks, {
      tables: { bucket: 'callpipe', prefix: 'tables/', timeZone: 'Asia/Tokyo' },
    });

    expect(result).toMatchObject({ status: 'done', tables: { dt: '2026-11-21' } });
    const input = onlyInput(mocks, 'writeCallTables');
    expect(input).toEqual({
      callId,
      result: { bucket: 'callpipe', key: result.resultKey },
      tables: { bucket: 'callpipe', prefix: 'tables/', timeZone: 'Asia/Tokyo' },
    });
    const order = mocks.calls.map((c) => c.activity);
    expect(order.indexOf('writeCallTables')).toBeGreaterThan(order.indexOf('publishResult'));
  });

  it('rows the tables refuse leave the call done, with the reason in its result', async () => {
    const mocks = mockActivities({
      writeCallTables: async () => {
        throw nonRetryable('StorageRefused', 'object storage refused tables/calls/…: AccessDenied');
      },
    });
    const { result, outcome } = await runCall('tables-refused', mocks);

    expect(result).toMatchObject({
      status: 'done',
      tables: { error: expect.stringContaining('AccessDenied') },
    });
    expect(outcome).toBe('done');
    expect(mocks.writeError).not.toHaveBeenCalled();
    expect(mocks.deleteStaging).toHaveBeenCalledTimes(1);
  });
});

describe('processRecording with mocked activities: staging and redo', () => {
  it('a plan that staged no audio for a track fails the call at `plan`: nothing streamed', async () => {
    const mocks = mockActivities();
    const plan = mocks.planSource.getMockImplementation()!;
    mocks.planSource.mockImplementation(async (input) => ({
      ...((await plan(input)) as object),
      stagedTracks: [],
    }));
    const { result, outcome } = await runCall('unstaged', mocks);

    expect(result).toMatchObject({ status: 'failed', stage: 'plan' });
    expect(result.reason).toContain('staged no audio for track 0');
    expect(mocks.recognizeSession).not.toHaveBeenCalled();
    expect(pick(onlyInput(mocks, 'writeError'), 'stage')).toBe('plan');
    expect(outcome).toBe('failed');
  });

  it('a call whose result.json exists is skipped: nothing probed, outcome skipped', async () => {
    const mocks = mockActivities({ resultExists: async () => true });
    const { result, callId, stage, outcome, progress } = await runCall('skip', mocks);

    expect(result).toMatchObject({ callId, status: 'skipped' });
    // The done-check looked at this call's result.json.
    const checked = onlyInput(mocks, 'resultExists');
    expect(JSON.stringify(checked)).toContain(`${callId}/result.json`);
    expect(mocks.probeSource).not.toHaveBeenCalled();
    expect(mocks.publishResult).not.toHaveBeenCalled();
    expect(mocks.writeError).not.toHaveBeenCalled();
    expect(outcome).toBe('skipped');
    expect(stage).toBe('done');
    expect(progress.stage).toBe('done');
  });

  it('`redo` processes a call whose result.json exists, to the end: status done', async () => {
    const mocks = mockActivities({ resultExists: async () => true });
    const { result, callId, stage, outcome, progress } = await runCall('redo', mocks, { redo: true });

    expect(result).toMatchObject({
      callId,
      status: 'done',
      sessions: 2,
      utterances: 2 * UTTERANCES_PER_SESSION,
      durationSeconds: CALL_SECONDS,
      restarts: 0,
    });
    expect(result.stepFailures ?? []).toEqual([]);
    expect(mocks.probeSource).toHaveBeenCalledTimes(1);
    expect(mocks.recognizeSession).toHaveBeenCalledTimes(2);
    const written = onlyInput(mocks, 'publishResult');
    expect(pick(written, 'callId')).toBe(callId);
    expect(pick(written, 'stepFailures') ?? []).toEqual([]);
    expect(mocks.deleteStaging).toHaveBeenCalledTimes(1);
    expect(mocks.writeError).not.toHaveBeenCalled();
    expect(outcome).toBe('done');
    expect(stage).toBe('done');
    expect(progress).toMatchObject({
      callId,
      stage: 'done',
      sessionsTotal: 2,
      sessionsTranscoded: 2,
      sessionsRecognized: 2,
      audioSeconds: CALL_SECONDS,
      audioSecondsRecognized: 2 * CALL_SECONDS,
    });
  });
});

describe('processRecording with mocked activities: redaction and speakers', () => {
  it('redaction runs before every text step: they read the redacted timeline, the write gets both', async () => {
    const mocks = mockActivities();
    const unredacted = { bucket: 'callpipe-restricted', prefix: 'unredacted/' };
    const { result, callId } = await runCall('redacted', mocks, { redaction: { unredacted } });
    expect(result.status).toBe('done');
    const redact = onlyInput(mocks, 'redactText');
    const recognized = String(pick(redact, 'timelineKey'));
    const masked = String(pick(redact, 'redactedTimelineKey'));
    // Redaction reads the timeline the speakers stage wrote (who said what established first).
    expect(recognized).toMatch(/timeline\.speakers\.json$/);
    expect(recognized).toBe(pick(onlyInput(mocks, 'assignSpeakers'), 'outputTimelineKey'));
    expect(masked).not.toBe(recognized);
    // Nothing reads the recognized text after redaction, and redaction came first.
    for (const step of [
      'removeFillers',
      'summarizeCall',
      'analyzeSentiment',
      'extractKeywords',
      'classifyDialogActs',
    ] as const) {
      expect(pick(onlyInput(mocks, step), 'timelineKey'), step).toBe(masked);
    }
    const order = mocks.calls.map((c) => c.activity);
    expect(order.indexOf('redactText')).toBeLessThan(order.indexOf('removeFillers'));
    expect(order.indexOf('mergeTimeline')).toBeLessThan(order.indexOf('assignSpeakers'));
    expect(order.indexOf('assignSpeakers')).toBeLessThan(order.indexOf('redactText'));
    const written = onlyInput(mocks, 'publishResult');
    expect(pick(written, 'timelineKey')).toBe(masked);
    expect(pick(written, 'recognizedTimelineKey')).toBe(recognized);
    expect(pick(written, 'redactionKey')).toBe(pick(redact, 'outputKey'));
    expect(pick(written, 'speakersKey')).toBe(pick(onlyInput(mocks, 'assignSpeakers'), 'outputKey'));
    expect(pick(written, 'output', 'unredacted')).toMatchObject({
      bucket: 'callpipe-restricted',
      result: `unredacted/${callId}/result.json`,
      transcript: `unredacted/${callId}/transcript.vtt`,
    });
    // The redaction's requests count in the call's total (every text step costs STEP_COST here).
    const textSteps = mocks.calls.filter((c) =>
      [
        'redactText',
        'removeFillers',
        'summarizeCall',
        'analyzeSentiment',
        'extractKeywords',
        'classifyDialogActs',
      ].includes(c.activity),
    ).length;
    expect(textSteps).toBeGreaterThanOrEqual(5);
    expect(result.requests).toBe(2 * 4 + STEP_COST.requests * textSteps);
  });

  it('a speakers stage that cannot run leaves the call done, on the merged timeline, without role evidence', async () => {
    const mocks = mockActivities({
      assignSpeakers: async () => {
        throw ApplicationFailure.create({
          type: 'InvalidStepInput',
          message: 'no staged audio',
          nonRetryable: true,
        });
      },
    });
    const { result } = await runCall('speakers-failed', mocks);
    expect(result.status).toBe('done');
    const merged = String(pick(onlyInput(mocks, 'mergeTimeline'), 'timelineKey'));
    expect(pick(onlyInput(mocks, 'redactText'), 'timelineKey')).toBe(merged);
    expect(pick(onlyInput(mocks, 'publishResult'), 'speakersKey')).toBeUndefined();
  });
  it('redaction that cannot finish fails the call at `redact`: no text step, no result.json', async () => {
    const reason = 'redaction: the service kept blocking requests (99997): gave up after 40 retries';
    const mocks = mockActivities({ redactText: async () => failedStep(reason) });
    const { result, stage, outcome, progress } = await runCall('redact-failed', mocks);
    expect(result).toMatchObject({ status: 'failed', stage: 'redact', reason });
    expect(pick(onlyInput(mocks, 'writeError'), 'stage')).toBe('redact');
    for (const later of [
      'removeFillers',
      'summarizeCall',
      'analyzeSentiment',
      'extractKeywords',
      'publishResult',
    ] as const) {
      expect(mocks[later]).not.toHaveBeenCalled();
    }
    expect([stage, outcome, progress.stage]).toEqual(['failed', 'failed', 'failed']);
  });
});

describe('processRecording with mocked activities: redacted audio', () => {
  it('the redacted audio, when asked for, is made on the media queue from the redaction records', async () => {
    const mocks = mockActivities();
    const { result, callId } = await runCall('audio', mocks, { redaction: { audio: { mask: 'silence' } } });
    expect(result.status).toBe('done');
    const asked = onlyInput(mocks, 'redactAudio');
    expect(pick(asked, 'redactionKey')).toBe(pick(onlyInput(mocks, 'redactText'), 'outputKey'));
    expect(pick(asked, 'mask')).toBe('silence');
    expect(pick(asked, 'output', 'key')).toBe(`results/${callId}/audio.redacted.flac`);
    expect(pick(asked, 'probe', 'sampleRate')).toBeGreaterThan(0);
    expect(pick(onlyInput(mocks, 'publishResult'), 'audioRedaction')).toMatchObject({
      status: 'written',
      mask: 'silence',
    });
  });

  it('no redacted audio unless asked; one that did not check out leaves the call partial with the reason', async () => {
    const quiet = mockActivities();
    await runCall('no-audio', quiet);
    expect(quiet.redactAudio).not.toHaveBeenCalled();
    expect(pick(onlyInput(quiet, 'publishResult'), 'audioRedaction')).toBeUndefined();

    const reason = 'redacted span 2 (61.20–70.00 s) lies beyond the audio (64.50 s)';
    const mocks = mockActivities({ redactAudio: async () => ({ status: 'failed', reason }) });
    const { result } = await runCall('audio-failed', mocks, { redaction: { audio: { mask: 'tone' } } });
    expect(result).toMatchObject({ status: 'partial', stepFailures: [{ step: 'audioRedaction', reason }] });
    const written = onlyInput(mocks, 'publishResult');
    expect(pick(written, 'audioRedaction')).toEqual({ status: 'failed', reason });
    expect(pick(written, 'stepFailures')).toEqual([{ step: 'audioRedaction', reason }]);
  });
});

describe('processRecording with mocked activities: insights and dialog acts', () => {
  it('the insights stage scores by the rule file before publish, which reads its document; matched categories become CallpipeCategories', async () => {
    const mocks = mockActivities();
    const score = mocks.computeInsights.getMockImplementation()!;
    mocks.computeInsights.mockImplementation(async (input) => ({
      ...((await score(input)) as object),
      categories: ['greeting', 'complaint'],
    }));
    const rulesKey = 'input/rules/0123456789abcdef/rules.json';
    const { handle, result, callId } = await runCall('categories', mocks, { rulesKey });
    expect(result.status).toBe('done');
    const insights = onlyInput(mocks, 'computeInsights');
    expect(pick(insights, 'rulesKey')).toBe(rulesKey);
    expect(pick(insights, 'callId')).toBe(callId);
    expect(pick(insights, 'durationSeconds')).toBe(CALL_SECONDS);
    expect(String(pick(insights, 'outputKey'))).toMatch(new RegExp(`calls/${callId}/.*insights\\.json$`));
    const published = onlyInput(mocks, 'publishResult');
    expect(pick(published, 'insightsKey')).toBe(pick(insights, 'outputKey'));
    expect(pick(published, 'rulesKey')).toBeUndefined();
    expect(pick(published, 'timelineKey')).toBe(pick(insights, 'timelineKey'));
    expect(pick(published, 'sentimentKey')).toBe(pick(insights, 'sentimentKey'));
    const order = mocks.calls.map((c) => c.activity);
    expect(order.indexOf('computeInsights')).toBeLessThan(order.indexOf('publishResult'));
    expect(await searchAttribute(handle, SEARCH_ATTRIBUTE_KEYS.categories)).toEqual([
      'greeting',
      'complaint',
    ]);
  });

  it('insights that cannot be computed fail the call at `insights`: error.json, no result.json', async () => {
    const reason = 'rule file in/rules/x/rules.json: categories.0.rules.0.kind: invalid';
    const mocks = mockActivities({
      computeInsights: async () => {
        throw nonRetryable('RulesFileError', reason);
      },
    });
    const { result } = await runCall('insights-failed', mocks);
    expect(result).toMatchObject({ status: 'failed', stage: 'insights' });
    expect(pick(onlyInput(mocks, 'writeError'), 'stage')).toBe('insights');
    expect(mocks.publishResult).not.toHaveBeenCalled();
  });

  it('dialog acts run beside the other text steps at the call’s grain, and reach the write; off: not at all', async () => {
    const mocks = mockActivities();
    const text = { sentiment: 'window' as const, dialogActs: 'utterance' as const, windowSeconds: 20 };
    const { result } = await runCall('acts', mocks, { text });
    expect(result.status).toBe('done');
    const acts = onlyInput(mocks, 'classifyDialogActs');
    expect(pick(acts, 'grain')).toBe('utterance');
    expect(pick(acts, 'windowSeconds')).toBe(20);
    expect(pick(onlyInput(mocks, 'analyzeSentiment'), 'grain')).toBe('window');
    expect(pick(onlyInput(mocks, 'publishResult'), 'dialogActsKey')).toBe(pick(acts, 'outputKey'));

    const off = mockActivities();
    await runCall('acts-off', off, { text: { ...text, dialogActs: 'off' } });
    expect(off.classifyDialogActs).not.toHaveBeenCalled();
    expect(pick(onlyInput(off, 'publishResult'), 'dialogActsKey')).toBeUndefined();
  });
});

describe('processRecording with mocked activities: cancellation', () => {
  it('a call cancelled while recognizing ends cancelled: sessions cancelled, no error.json, no result', async () => {
    const cancelled: number[] = [];
    const mocks = mockActivities({
      // Streams until cancelled; cancellation reaches an activity through its heartbeats only.
      recognizeSession: async (input) => {
        const ctx = Context.current();
        const beat = setInterval(() => ctx.heartbeat({ resumeAt: 0 }), 100);
        try {
          await ctx.sleep(60_000);
          throw new Error('recognition was never cancelled');
        } catch (err) {
          if (err instanceof CancelledFailure) cancelled.push(Number(pick(input, 'session')));
          throw err;
        } finally {
          clearInterval(beat);
        }
      },
    });
    const taskQueue = uniqueQueue('cancel');
    const callId = 'cancel-3f9a0c1e';
    await withWorker(testEnv(), taskQueue, mocks.activities, async () => {
      const handle = await testEnv().client.workflow.start(processRecording, {
        taskQueue,
        workflowId: `process-${taskQueue}`,
        // Heartbeats every 0.8 s at most (80 % of the timeout): the cancellation arrives quickly.
        args: [processInput(taskQueue, callId, { heartbeatTimeoutSeconds: 1 })],
      });
      await waitFor('both sessions streaming', () => mocks.recognizeSession.mock.calls.length === 2);
      expect(await handle.query(progressQuery)).toMatchObject({
        stage: 'recognize',
        sessionsTotal: 2,
        sessionsTranscoded: 2,
        sessionsRecognized: 0,
      });

      await handle.cancel();
      const err = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
      // Both streams were told to stop (not left to run out their start-to-close timeout).
      await waitFor('both sessions cancelled', () => cancelled.length === 2, 10_000);
      expect(cancelled.sort()).toEqual([0, 1]);

      // A cancellation is not a failure: no error.json, no result, nothing after recognition. The
      // staging clean-up runs only after a successful write, so a cancelled call's staging is left.
      expect(mocks.writeError).not.toHaveBeenCalled();
      expect(mocks.publishResult).not.toHaveBeenCalled();
      expect(mocks.mergeTimeline).not.toHaveBeenCalled();
      expect(mocks.deleteStaging).not.toHaveBeenCalled();
      expect(await searchAttribute(handle, SEARCH_ATTRIBUTE_KEYS.stage)).toBe('recognize');
      expect(await searchAttribute(handle, SEARCH_ATTRIBUTE_KEYS.outcome)).toBeUndefined();
    });
  });
});

describe('processRecording: stream or file recognition', () => {
  /** A file plan of the mocked call: 40 pieces per track, and one stretch streamed on track 1. */
  function filePlan(input: unknown) {
    const probe = (pick(input, 'probe') as ReturnType<typeof probeResult> | undefined) ?? probeResult();
    const prefix = pick(input, 'stageTracksUnder') as string;
    const tracks = [
      { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
      { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
    ];
    const sessions = tracks.flatMap((t) =>
      Array.from({ length: t.track === 1 ? 41 : 40 }, (_, i) => ({
        track: t.track,
        channel: t.track,
        speaker: t.speaker,
        start: i * 50,
        end: (i + 1) * 50,
        cut: 'silence' as const,
        silence: { start: (i + 1) * 50 - 1, end: (i + 1) * 50 + 1 },
        recognition: t.track === 1 && i === 40 ? ('stream' as const) : ('file' as const),
      })),
    );
    return {
      version: 1,
      source: { ...probe, path: probe.path, durationSeconds: 2050 },
      options: {
        strategy: 'balanced',
        maxSessionSeconds: 3000,
        searchWindowSeconds: 60,
        silenceNoiseDb: -30,
        silenceMinSeconds: 0.3,
        recognition: 'file',
      },
      tracks,
      sessions: sessions.map((s, index) => ({ index, ...s })),
      stagedTracks: tracks.map((t) => ({
        track: t.track,
        key: `${prefix}t${t.track}.mulaw`,
        format: 'mulaw',
        bytes: 2050 * 8000,
      })),
    };
  }

  it('file: the plan is asked for pieces; a few activities recognize them, one per group of a track; the result says so', async () => {
    const mocks = mockActivities({ planSource: async (input) => filePlan(input) });
    const { result } = await runCall('file-mode', mocks, { recognition: 'file' });
    expect(result.status, result.reason).toBe('done');
    expect(pick(onlyInput(mocks, 'planSource'), 'options', 'recognition')).toBe('file');
    // 40 and 40 pieces: one group per track (at most 32 per group: two per track), not 80 activities.
    const groups = mocks.callsOf('recognizePieces');
    expect(groups).toHaveLength(4);
    expect(groups.map((g) => (pick(g.input, 'pieces') as unknown[]).length).sort()).toEqual([20, 20, 20, 20]);
    expect(mocks.callsOf('recognizeSession')).toHaveLength(1);
    expect(mocks.callsOf('fileRecognitionRate')).toHaveLength(0);
    // The merge reads each piece from its group's object.
    const refs = pick(onlyInput(mocks, 'mergeTimeline'), 'sessions') as {
      session: number;
      resultKey: string;
    }[];
    expect(refs).toHaveLength(81);
    expect(new Set(refs.map((r) => r.resultKey)).size).toBe(5);
    const facts = pick(onlyInput(mocks, 'publishResult'), 'facts', 'recognition');
    expect(facts).toMatchObject({ requested: 'file', used: 'mixed' });
  });

  it('auto: streams when the workers measured file requests no faster than real time, and says why', async () => {
    const mocks = mockActivities({ fileRecognitionRate: async () => ({ rtf: 1.4, requests: 12 }) });
    const { result } = await runCall('auto-mode', mocks, { recognition: 'auto' });
    expect(result.status, result.reason).toBe('done');
    expect(pick(onlyInput(mocks, 'planSource'), 'options', 'recognition')).toBeUndefined();
    expect(mocks.callsOf('recognizePieces')).toHaveLength(0);
    const facts = pick(onlyInput(mocks, 'publishResult'), 'facts', 'recognition') as {
      used: string;
      reason: string;
    };
    expect(facts.used).toBe('stream');
    expect(facts.reason).toMatch(/1\.4 × real time/);
  });
});
