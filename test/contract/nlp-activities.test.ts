/**
 * Contract tests of the text activities against the emulator over real HTTP: the activity functions
 * are called directly (no Temporal), with an in-memory store for staging. They measure the requests
 * filler removal needs per utterance, check that batching keeps every utterance's text its own, and
 * that the service's error classes leave the activities as the failures the workflow expects.
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';
import type { NlpActivityOptions } from '../../activities/nlp/step.ts';
import { startEmulator } from '../../emulator/server.ts';
import phrasebook from '../../emulator/phrasebook.ja.json' with { type: 'json' };
import type { EmulatorAccountInput } from '../../schemas/emulator-accounts.ts';
import type { EmulatorFaultsInput } from '../../schemas/emulator-faults.ts';
import type { ServiceConfig } from '../../schemas/config.ts';
import {
  fillersOutputSchema,
  keywordsOutputSchema,
  sentimentOutputSchema,
  summaryOutputSchema,
} from '../../schemas/result.ts';
import type { Utterance } from '../../schemas/transcript.ts';
import { createServiceClient } from '../../service/index.ts';
import { MemoryStore, timeline } from '../unit/nlp.helpers.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function start(
  options: { faults?: EmulatorFaultsInput; accounts?: EmulatorAccountInput[] } = {},
): Promise<ServiceConfig> {
  emulator = await startEmulator({ port: 0, speed: 100, ...options });
  return {
    baseUrl: emulator.baseUrl,
    authUrl: emulator.authUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    model: 'ja-gen_tf-08',
    domainId: emulator.domainId,
    speed: 100,
  };
}

/** A call of `n` utterances from the shipped phrasebook, alternating speakers, 5 s apart. */
function call(n: number): Utterance[] {
  const phrases = Object.values(phrasebook as Record<string, string>);
  // Each lap through the phrasebook joins a second phrase, so no utterance repeats another word for word
  // (the summary drops repeats) whatever the phrasebook's size.
  const line = (i: number) => {
    const lap = Math.floor(i / phrases.length);
    return phrases[i % phrases.length]! + (lap ? phrases[(i * 7 + lap) % phrases.length]! : '');
  };
  return Array.from({ length: n }, (_, i) => ({
    index: i,
    speaker: i % 2 === 0 ? 'agent' : 'customer',
    track: i % 2,
    session: 0,
    start: i * 5,
    end: i * 5 + 4,
    // Every third without its final 。, as recognition without punctuation would give.
    text: i % 3 === 2 ? line(i).replace(/。$/, '') : line(i),
  }));
}

function setup(config: ServiceConfig, utterances: Utterance[], options: NlpActivityOptions = {}) {
  const store = new MemoryStore();
  store.objects.set('c/timeline.json', JSON.stringify(timeline(utterances, utterances.length * 5)));
  const service = createServiceClient(config);
  // The emulator's account allows 50 requests/s (burst 100); the process is paced below that, as a
  // worker is with config `nlpRequestsPerSecond`.
  const activities = createNlpActivities({ service, store, options: { requestsPerSecond: 40, ...options } });
  return { store, activities };
}

function nlpRequests(fragment: string): number {
  const stats = emulator!.stats();
  return Object.entries(stats.byEndpoint)
    .filter(([path]) => path.includes(fragment))
    .reduce((n, [, count]) => n + count, 0);
}

const base = { callId: 'call-1', timelineKey: 'c/timeline.json' };

describe('text activities against the emulator: cleaning and summaries', () => {
  it('filler removal: a few requests for a whole call, each utterance cleaned as if sent alone', async () => {
    const config = await start();
    const utterances = call(120);
    const { store, activities } = setup(config, utterances);

    const batched = await activities.removeFillers({ ...base, outputKey: 'c/fillers.json' });
    expect(batched.status).toBe('ok');
    const requests = nlpRequests('remove_filler');
    const doc = fillersOutputSchema.parse(store.json('c/fillers.json'));
    expect(doc.fallbacks).toBe(0);
    expect(requests).toBe(doc.batches);
    // Measured: 120 utterances (≈ 3,300 characters) in 3 requests with the default 1,500-character batches.
    expect(requests / utterances.length).toBeLessThan(0.05);
    console.log(
      `fillers: ${utterances.length} utterances, ${requests} requests (${(requests / utterances.length).toFixed(3)} per utterance)`,
    );

    const alone = await activities.removeFillers({
      ...base,
      outputKey: 'c/fillers-alone.json',
      maxBatchUtterances: 1,
    });
    expect(alone.status).toBe('ok');
    expect(nlpRequests('remove_filler') - requests).toBe(utterances.length);
    const reference = fillersOutputSchema.parse(store.json('c/fillers-alone.json'));
    expect(doc.utterances).toEqual(reference.utterances);
    const withFillers = doc.utterances.filter((u) => u.fillers.length > 0);
    expect(withFillers.length).toBeGreaterThan(10);
    for (const u of withFillers) {
      for (const f of u.fillers) expect(u.normalizedText.slice(f.begin, f.end)).toBe(f.text);
      expect(u.cleanedText).not.toMatch(/^(えー|えーっと|あのー)/);
    }
    // The cost the activity reports is what the emulator saw (plus the token request).
    expect(batched.cost.requests - requests).toBeLessThanOrEqual(1);
  });

  it('summary, sentiment and keywords on the cleaned text; a long dialog is summarized hierarchically', async () => {
    const config = await start();
    const utterances = call(300);
    const { store, activities } = setup(config, utterances);
    expect((await activities.removeFillers({ ...base, outputKey: 'c/fillers.json' })).status).toBe('ok');
    const input = { ...base, fillersKey: 'c/fillers.json' };

    const [summary, sentiment, keywords] = await Promise.all([
      activities.summarizeCall({ ...input, outputKey: 'c/summary.json' }),
      activities.analyzeSentiment({ ...input, outputKey: 'c/sentiment.json' }),
      activities.extractKeywords({ ...input, outputKey: 'c/keywords.json', maxKeywords: 7 }),
    ]);
    expect([summary.status, sentiment.status, keywords.status]).toEqual(['ok', 'ok', 'ok']);

    const s = summaryOutputSchema.parse(store.json('c/summary.json'));
    expect(s.documentChars).toBeGreaterThan(5000);
    expect(s.levels).toBeGreaterThanOrEqual(2);
    expect(s.text.length).toBeGreaterThan(0);
    expect(s.text).not.toMatch(/agent|customer/);
    expect(nlpRequests('summary')).toBe(s.windows);
    console.log(`summary: ${s.documentChars} characters, ${s.levels} levels, ${s.windows} requests`);

    const sent = sentimentOutputSchema.parse(store.json('c/sentiment.json'));
    // One request per distinct cleaned text: a line said again shares its answer (unit-requests.ts).
    const cleaned = fillersOutputSchema
      .parse(store.json('c/fillers.json'))
      .utterances.map((u) => u.cleanedText);
    expect(nlpRequests('sentiment')).toBe(new Set(cleaned.map((t) => t.trim())).size);
    expect(sent.overall.utterances).toBe(utterances.length);
    expect(sent.overall.positive + sent.overall.negative + sent.overall.neutral).toBe(utterances.length);
    expect(Object.keys(sent.bySpeaker).sort()).toEqual(['agent', 'customer']);
    expect(sent.byQuarter.reduce((n, q) => n + q.overall.utterances, 0)).toBe(utterances.length);

    const k = keywordsOutputSchema.parse(store.json('c/keywords.json'));
    expect(nlpRequests('keyword')).toBe(1);
    expect(k.keywords.length).toBeGreaterThan(0);
    expect(k.keywords.length).toBeLessThanOrEqual(7);
  });
});

describe('text activities against the emulator: blocked and refused', () => {
  it('30 % of requests blocked (99997): one attempt rides them out, every retry counted; a service that blocks everything fails the step alone within its budget', async () => {
    const config = await start({ faults: { seed: 7, rateLimitBursts: { probability: 0.3 } } });
    const utterances = call(40);
    const { store, activities } = setup(config, utterances, { requestBaseDelayMs: 5, requestMaxDelayMs: 20 });
    const out = await activities.analyzeSentiment({ ...base, outputKey: 'c/sentiment.json', concurrency: 2 });
    expect(out.status).toBe('ok');
    const blocked = emulator!.stats().byCode['99997'] ?? 0;
    expect(blocked).toBeGreaterThan(0);
    // Every blocked request was retried once and counted; every request the emulator saw is in the cost.
    expect(out.cost.retries).toBe(blocked);
    expect(out.cost.requests).toBeGreaterThanOrEqual(nlpRequests('sentiment'));
    const doc = sentimentOutputSchema.parse(store.json('c/sentiment.json'));
    expect(doc.utterances.every((u) => u.sentiment !== null)).toBe(true);
    console.log(`sentiment at 30 % 99997: ${out.cost.requests} requests, ${out.cost.retries} retries`);

    // Everything blocked: no loop multiplies another. The step gives up after its allowance of retries
    // (not attempts × retries), as a step failure the call survives, never as a Temporal retry.
    await emulator!.close();
    const dead = await start({ faults: { seed: 7, rateLimitBursts: { probability: 1 } } });
    const blocking = setup(dead, utterances, {
      requestBaseDelayMs: 1,
      requestMaxDelayMs: 2,
      rateLimitAllowance: 5,
    });
    const failed = await blocking.activities.analyzeSentiment({
      ...base,
      outputKey: 'c/s2.json',
      concurrency: 1,
    });
    expect(failed).toMatchObject({ status: 'failed', reason: expect.stringMatching(/kept blocking/) });
    expect(nlpRequests('sentiment')).toBe(6); // the first request and 5 retries
  });

  it('quota used up: a retryable failure with a long delay that says so; bad credentials: non-retryable', async () => {
    const config = await start({
      accounts: [
        { clientId: 'small', clientSecret: 'small-secret', kind: 'Developers', usageLimitPer24h: 2 },
        { clientId: 'other', clientSecret: 'other-secret' },
      ],
    });
    const small = setup({ ...config, clientId: 'small', clientSecret: 'small-secret' }, call(10));
    const quota = await small.activities
      .analyzeSentiment({ ...base, outputKey: 'c/s.json', concurrency: 1 })
      .catch((e: unknown) => e);
    expect(quota).toBeInstanceOf(ApplicationFailure);
    expect(quota).toMatchObject({
      type: 'ServiceQuotaExhausted',
      nonRetryable: false,
      nextRetryDelay: 900_000,
    });
    expect((quota as Error).message).toMatch(/quota exhausted/);

    const wrong = setup({ ...config, clientId: 'other', clientSecret: 'wrong-secret' }, call(3));
    const auth = await wrong.activities
      .extractKeywords({ ...base, outputKey: 'c/k.json' })
      .catch((e: unknown) => e);
    expect(auth).toMatchObject({ type: 'ServiceAuthFailed', nonRetryable: true });
    expect(JSON.stringify(auth)).not.toContain('wrong-secret');
    expect((auth as Error).message).not.toContain('wrong-secret');
  });
});
