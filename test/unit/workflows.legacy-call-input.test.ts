/**
 * Inputs of the old shape (before a call's settings were one CallSpec) read as the spec they stood for:
 * the defaults the workflow applied then, and the same spec the configuration makes now.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callSpecOf, callSpecSchema } from '../../schemas/call-spec.ts';
import { RECOGNITION_HEARTBEAT_SECONDS } from '../../schemas/limits.ts';
import { loadConfig, planOptionsOf, slowestPace, taskQueues, textGrainsOf } from '../../schemas/config.ts';
import {
  isLegacyInput,
  specOfLegacyChild,
  specOfLegacyInput,
  type LegacyProcessRecordingInput,
} from '../../workflows/legacy-call-input.ts';

const HISTORIES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** The input a recorded history's run was started with. */
function startInput(file: string): LegacyProcessRecordingInput {
  const history = JSON.parse(readFileSync(`${HISTORIES}${file}`, 'utf8')) as {
    events: { workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } } }[];
  };
  const data = history.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0]!.data;
  return JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as LegacyProcessRecordingInput;
}

const output = { bucket: 'callpipe', prefix: 'results/' };

describe('specOfLegacyInput', () => {
  it('reads every recorded history as a valid spec', () => {
    for (const file of readdirSync(HISTORIES).filter(
      (f) => f.startsWith('process-recording-') && f.endsWith('.json'),
    )) {
      const input = startInput(file);
      // Histories recorded since the spec (process-recording-stereo.json: the speakers stage) carry one.
      const spec = isLegacyInput(input) ? specOfLegacyInput(input) : (input as { spec: unknown }).spec;
      expect(() => callSpecSchema.parse(spec), file).not.toThrow();
    }
    expect(isLegacyInput(startInput('process-recording-stereo-before-speakers-stage.json'))).toBe(true);
    expect(isLegacyInput(startInput('process-recording-stereo.json'))).toBe(false);
  });

  it('applies the defaults the workflow applied: probes on the media queue when none was named', () => {
    expect(specOfLegacyInput(startInput('process-recording-stereo-before-insights-stage.json'))).toEqual({
      queues: { media: 'callpipe-media', probe: 'callpipe-media', asr: 'callpipe-asr', nlp: 'callpipe-nlp' },
      stagingPrefix: 'staging/',
      cleanupStaging: true,
      plan: { strategy: 'balanced', maxSessionSeconds: 3000, budget: 16, minSessionSeconds: 60 },
      pacingSpeed: 100,
      maxRestarts: 10,
      // Today's: the recognition activities it schedules now run on today's workers.
      heartbeatTimeoutSeconds: RECOGNITION_HEARTBEAT_SECONDS,
      rulesKey: null,
      wordsKey: null,
      tables: { bucket: 'callpipe', prefix: 'tables/', timeZone: 'UTC' },
      text: { sentiment: 'window', dialogActs: 'turn', windowSeconds: 30 },
      redaction: {},
    });
  });

  it('keeps what the input said', () => {
    const spec = specOfLegacyInput(startInput('process-recording-redacted-audio.json'));
    expect(spec.queues.probe).toBe('callpipe-probe');
    expect(spec.text).toEqual({ sentiment: 'turn', dialogActs: 'turn', windowSeconds: 30 });
    expect(spec.redaction).toEqual({ audio: { mask: 'tone' } });
    const bare = specOfLegacyInput({
      callId: 'c',
      source: { bucket: 'calls', key: 'c.wav' },
      output,
      stagingPrefix: 'staging/',
      cleanupStaging: false,
      rulesKey: 'input/rules/r.json',
      wordsKey: 'input/dictionaries/w.json',
      maxRestarts: 3,
    });
    expect(bare.queues).toEqual({
      media: 'callpipe-media',
      probe: 'callpipe-probe',
      asr: 'callpipe-asr',
      nlp: 'callpipe-nlp',
    });
    expect(bare).toMatchObject({
      cleanupStaging: false,
      rulesKey: 'input/rules/r.json',
      wordsKey: 'input/dictionaries/w.json',
      maxRestarts: 3,
      pacingSpeed: 1,
    });
  });

  it('tells the new shape apart', () => {
    expect(isLegacyInput({ callId: 'c', spec: {} })).toBe(false);
  });
});

describe('specOfLegacyChild', () => {
  it("is the spec callSpecOf makes from the configuration an old backfill's child was made from", () => {
    const config = loadConfig({ env: { CALLPIPE_KEEP_STAGING: 'true', CALLPIPE_SERVICE_SPEED: '20' } });
    const plan = planOptionsOf(config);
    const { media, probe, asr, nlp } = taskQueues(config);
    // What `childDefaults` of 0.2 put in a backfill's input.
    const child = {
      stagingPrefix: config.s3.stagingPrefix,
      keepStaging: config.s3.keepStaging,
      pacingSpeed: slowestPace(config.service.speed),
      maxSessionSeconds: plan.maxSessionSeconds,
      planStrategy: plan.strategy,
      planBudget: plan.budget,
      minSessionSeconds: plan.minSessionSeconds,
      queues: { media, probe, asr, nlp },
      tables: { prefix: config.s3.tablesPrefix, timeZone: config.timeZone },
      text: textGrainsOf(config),
      rulesKey: 'input/rules/r.json',
    };
    expect(specOfLegacyChild(child, output)).toEqual(
      callSpecOf(config, output, { rulesKey: 'input/rules/r.json' }),
    );
  });

  it('fills what a bare child left out as the workflow and the workers did', () => {
    const spec = specOfLegacyChild({ stagingPrefix: 'staging/' }, output);
    expect(spec.plan).toEqual({
      strategy: 'balanced',
      maxSessionSeconds: 3000,
      budget: 16,
      minSessionSeconds: 60,
    });
    expect(spec.cleanupStaging).toBe(true);
  });
});
