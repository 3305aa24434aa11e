/**
 * Text classification (spec 03) over real HTTP: the service client against the emulator. Learn from a
 * multipart training file, `processing` until trained (a manual clock, so no wall-clock wait), the
 * cross-validated report, classify, list, delete, the 10-model limit and the errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../emulator/clock.ts';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import { readTrainingCsv, trainingCsv } from '../../schemas/classifier-dataset.ts';
import { reportRowSchema } from '../../schemas/service-classifier.ts';
import { createServiceClient, type ServiceClient } from '../../service/client.ts';
import { isServiceError } from '../../service/errors.ts';
import { post, serviceConfigOf, TEXT_TEST_ACCOUNTS, token } from './emulator.client.ts';

const clock = new ManualClock();
let emu: RunningEmulator;
let client: ServiceClient;

/** Three reasons said in varied words; the last item of each held out. */
const EXAMPLES: Record<string, string[]> = {
  billing: [
    '先月の請求が二回引き落とされています',
    '請求書の金額が高すぎると思います',
    '料金の明細がおかしいです',
    '請求額が先月と違うんですが',
    '引き落としの金額を確認したいです',
    '支払いの請求が重複しています',
    '今月の料金の請求について聞きたい',
  ],
  outage: [
    'インターネットがつながらないんです',
    '昨日から回線が切れたままです',
    'ルーターのランプが赤く点滅しています',
    'ネットが遅くて使えません',
    '接続が何度も切れてしまいます',
    'Wi-Fiにつながらなくなりました',
    '朝から回線がつながりません',
  ],
  cancel: [
    '解約したいんですけど手続きを教えてください',
    '違約金はかかりますか',
    '契約をやめたいです',
    '来月で解約をお願いします',
    '退会の方法を知りたいです',
    '契約を解除したいと思っています',
    'サービスを解約したいんです',
  ],
};
const training = Object.entries(EXAMPLES).flatMap(([c, texts]) =>
  texts.slice(0, -1).map((text) => ({ class: c, text })),
);

beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    speed: 1,
    clock: clock.now,
    accounts: TEXT_TEST_ACCOUNTS,
  });
  client = createServiceClient(serviceConfigOf(emu));
});
afterAll(async () => {
  await emu.close();
});

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    if (isServiceError(err)) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('text classification', () => {
  it('learns from a multipart dataset: processing, then completed with the cross-validated report', async () => {
    const { result: id } = await client.classifier.learn(trainingCsv(training));
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    const before = await client.classifier.status(id);
    expect(before.result.model_status).toBe('processing');
    // Classify before training ends: refused.
    expect((await refusal(client.classifier.classify(id, '請求がおかしい'))).httpStatus).toBe(409);
    clock.advance(60_000);
    const after = await client.classifier.status(id);
    expect(after.result.model_status).toBe('completed');
    const report = after.result.report!;
    for (const c of [...Object.keys(EXAMPLES), 'macro avg', 'weighted avg'])
      expect(reportRowSchema.safeParse(report[c]).success, c).toBe(true);
    expect(report.billing).toMatchObject({ support: 6 });
    expect(typeof report.accuracy).toBe('number');
    expect(report.accuracy as number).toBeGreaterThanOrEqual(0.6);
    // The held-out sentence of each reason is classified as that reason, scores best first and in [0, 1].
    for (const [c, texts] of Object.entries(EXAMPLES)) {
      const { result } = await client.classifier.classify(id, texts.at(-1)!);
      expect(result[0]!.class, texts.at(-1)).toBe(c);
      expect(result).toHaveLength(3);
      expect(result[0]!.score).toBeGreaterThan(result[1]!.score);
      expect(result.reduce((s, r) => s + r.score, 0)).toBeCloseTo(1, 3);
    }
    const listed = await client.classifier.list();
    expect(listed.result).toContainEqual(
      expect.objectContaining({ model_id: id, model_status: 'completed' }),
    );
    expect(listed.result[0]!.created_at).toMatch(/[+-]\d\d:\d\d$/);
    await client.classifier.delete(id);
    expect((await refusal(client.classifier.status(id))).httpStatus).toBe(404);
    expect((await refusal(client.classifier.delete(id))).serviceMessage).toBe('there is no item to delete');
  });

  it('a dataset nothing separates fails; the limits of spec 03 are refused with their field named', async () => {
    const same = ['a', 'b'].flatMap((c) =>
      Array.from({ length: 6 }, (_, i) => ({ class: c, text: `同じ文${i}` })),
    );
    const { result: id } = await client.classifier.learn(trainingCsv(same));
    clock.advance(60_000);
    expect((await client.classifier.status(id)).result.model_status).toBe('failed');
    await client.classifier.delete(id);
    const cases: [string, RegExp][] = [
      [trainingCsv(training.filter((r) => r.class === 'billing')), /class : size must be between 2/],
      [trainingCsv(training.slice(1)), /billing must be greater than or equal to 6/],
      [trainingCsv([...training, { class: 'x'.repeat(129), text: 't' }]), /class : must be less than 128/],
      [
        trainingCsv([...training, { class: 'billing', text: 'あ'.repeat(3001) }]),
        /text : must be less than 3000/,
      ],
      [`${trainingCsv(training)}billing,a,b\n`, /invalid format/],
    ];
    for (const [csv, message] of cases) {
      const err = await refusal(client.classifier.learn(csv));
      expect(err.kind).toBe('invalid');
      expect(err.message).toMatch(message);
    }
    // The same checks name the line before anything is sent.
    expect(readTrainingCsv(`${trainingCsv(training)}billing,"a","b"\n`).problems[0]!.line).toBe(
      training.length + 1,
    );
  });

  it('the 11th model is refused with a conflict; deleting one makes room', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await client.classifier.learn(trainingCsv(training))).result);
    const err = await refusal(client.classifier.learn(trainingCsv(training)));
    expect(err.httpStatus).toBe(409);
    expect(err.kind).toBe('invalid');
    expect((await client.classifier.list()).result).toHaveLength(10);
    await client.classifier.delete(ids.pop()!);
    ids.push((await client.classifier.learn(trainingCsv(training))).result);
    for (const id of ids) await client.classifier.delete(id);
    expect((await client.classifier.list()).result).toEqual([]);
  });

  it('refuses Developers accounts, a non-multipart upload, a missing dataset and a wrong version', async () => {
    const dev = await token(emu, 'dev', 'dev-secret');
    const base = `${emu.baseUrl}/nlp/v1/classifier/models`;
    const auth = (t: string) => ({ Authorization: `Bearer ${t}` });
    expect((await post(base, '{}', { ...auth(dev), 'Content-Type': 'application/json' })).status).toBe(403);
    const access = await token(emu);
    const json = await post(base, '{}', { ...auth(access), 'Content-Type': 'application/json' });
    expect([json.status, (json.json as { message: string }).message]).toEqual([415, 'invalid Content-Type']);
    const empty = await post(base, '--b--\r\n', {
      ...auth(access),
      'Content-Type': 'multipart/form-data; boundary=b',
    });
    expect((empty.json as { message: string }).message).toBe('dataset : must not be null');
    const v2 = await post(`${emu.baseUrl}/nlp/v2/classifier/models`, '', auth(access));
    expect((v2.json as { status: number }).status).toBe(99993);
  });
});
