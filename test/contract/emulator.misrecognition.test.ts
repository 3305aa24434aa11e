/**
 * Misrecognition detection (spec 01, `/nlp/beta/detect_misrecognition`) over real HTTP: the emulator
 * answers from what it knows of its recognition (a placeholder, a misheard span with what was meant),
 * a plain sentence scores low; the wrong version and a missing sentence are refused as for other endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import { createServiceClient, type ServiceClient } from '../../service/client.ts';
import { isServiceError } from '../../service/errors.ts';
import { post, serviceConfigOf, token } from './emulator.client.ts';

let emu: RunningEmulator;
let client: ServiceClient;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  client = createServiceClient(serviceConfigOf(emu));
});
afterAll(async () => {
  await emu.close();
});

describe('detect_misrecognition', () => {
  it('scores a misheard span high with what was meant, a placeholder high with no suggestion, plain text low', async () => {
    const misheard = await client.nlp.detectMisrecognition('先月の声急が二回引き落とされてるんですけど。');
    expect(misheard.result).toEqual({
      score: 0.85,
      candidates: [
        {
          begin_pos: 3,
          end_pos: 5,
          form: '声急',
          detect_score: 0.85,
          correction: [{ form: '請求', correct_score: 0.8 }],
        },
      ],
    });
    const unknown = await client.nlp.detectMisrecognition('それは〈不明〉です');
    expect(unknown.result.score).toBe(0.9);
    expect(unknown.result.candidates).toEqual([
      { begin_pos: 3, end_pos: 7, form: '〈不明〉', detect_score: 0.9, correction: [] },
    ]);
    const plain = await client.nlp.detectMisrecognition('はい、わかりました。');
    expect(plain.result).toEqual({ score: 0.05, candidates: [] });
  });

  it('is a beta endpoint; a missing sentence is refused', async () => {
    const access = await token(emu);
    const headers = { Authorization: `Bearer ${access}`, 'Content-Type': 'application/json' };
    const v1 = await post(`${emu.baseUrl}/nlp/v1/detect_misrecognition`, '{"sentence":"a"}', headers);
    expect((v1.json as { status: number }).status).toBe(99993);
    const err = await client.nlp.detectMisrecognition('').catch((e: unknown) => e);
    expect(isServiceError(err) && err.kind).toBe('invalid');
    const missing = await post(`${emu.baseUrl}/nlp/beta/detect_misrecognition`, '{}', headers);
    expect(missing.json).toMatchObject({ status: 400, message: 'sentence : must not be null' });
  });
});
