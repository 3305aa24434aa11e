/**
 * File recognition (spec 02) between our client and the emulator over real HTTP, and the emulator's
 * side of it as issue 38 asks: a processing time of rtf × audio seconds ÷ speed, each request in flight
 * holding one of the account's concurrent sessions (550 beyond them), the fault file's recognition
 * errors, and a body read by the emulator's own multipart reader, not the client's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import { readForm, formBoundary, FormError } from '../../emulator/multipart-body.ts';
import { parseMultipart } from '../../schemas/multipart.ts';
import { createServiceClient } from '../../service/client.ts';
import { isServiceError } from '../../service/errors.ts';
import type { ServiceConfig } from '../../schemas/config.ts';
import { phraseToneSeconds, synthesize, toMulaw, type PhraseAt } from '../helpers/dtmf-audio.ts';
import { getJson, serviceConfigOf } from './emulator.client.ts';

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function start(options: Parameters<typeof startEmulator>[0]): Promise<ServiceConfig> {
  emu = await startEmulator({ port: 0, ...options });
  return serviceConfigOf(emu);
}

const script: PhraseAt[] = [
  { id: 3, start: 0.5 },
  { id: 120, start: 2.5 },
];
const audio = toMulaw(synthesize({ rate: 8000, phrases: script, duration: 4, noiseDbfs: -60 }));

describe('our client against the emulator', () => {
  it('recognizes a piece; its times are placed on the recording by the offset', async () => {
    const client = createServiceClient(await start({ speed: 100 }));
    const out = await client.recognizeFile({
      audio,
      startOffsetSeconds: 100,
      options: { punctuation: true },
    });
    expect(out.results).toHaveLength(2);
    out.results.forEach((r, i) => {
      expect(Math.abs(r.startSeconds - (100 + script[i]!.start))).toBeLessThanOrEqual(0.1);
      expect(
        Math.abs(r.endSeconds - (100 + script[i]!.start + phraseToneSeconds(script[i]!.id))),
      ).toBeLessThanOrEqual(0.1);
    });
    expect(out.cost.requests).toBe(2); // the token, the file
    expect(emu!.stats().fileRecognitions).toBe(1);
    expect(emu!.stats().fileAudioSeconds).toBe(4);
  });

  it('answers no sooner than rtf × audio seconds ÷ speed', async () => {
    const client = createServiceClient(await start({ speed: 2, fileRtf: 0.5 }));
    await client.tokens.get();
    const out = await client.recognizeFile({ audio });
    // 0.5 × 4 s ÷ 2 = 1 s: a lower bound, which no load can break.
    expect(out.durationMs).toBeGreaterThanOrEqual(1000 - 5);
  });

  it('a request beyond the account’s concurrent sessions is refused with 550, and the slot comes back', async () => {
    const client = createServiceClient(await start({ speed: 1, fileRtf: 1, concurrentSessions: 1 }));
    await client.tokens.get();
    const first = client.recognizeFile({ audio });
    // Wait (by work, not a clock) until the first request holds the account's one session.
    for (;;) {
      const stats = (await getJson(`${emu!.url}/emulator/stats`)) as {
        accounts: { activeSessions: number }[];
      };
      if (stats.accounts[0]!.activeSessions === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const refused = await client.recognizeFile({ audio }).catch((err: unknown) => err);
    expect(isServiceError(refused) && refused.code).toBe(550);
    expect((await first).results).toHaveLength(2);
    expect(emu!.stats().accounts[0]!.activeSessions).toBe(0);
    expect(emu!.stats().accounts[0]!.peakSessions).toBe(1);
  });

  it('the fault file’s recognition errors apply to file requests', async () => {
    const client = createServiceClient(
      await start({ speed: 100, faults: { streamErrors: [{ code: 600, afterAudioSeconds: 0, times: 1 }] } }),
    );
    const failed = await client.recognizeFile({ audio }).catch((err: unknown) => err);
    expect(isServiceError(failed) && failed.code).toBe(600);
    expect((await client.recognizeFile({ audio })).results).toHaveLength(2);
  });

  it('more than 60 s is refused by the client before any request', async () => {
    const client = createServiceClient(await start({ speed: 100 }));
    const err = await client.recognizeFile({ audio: Buffer.alloc(8000 * 61, 0xff) }).catch((e: unknown) => e);
    expect(isServiceError(err) && err.kind).toBe('invalid');
    expect(emu!.stats().fileRecognitions).toBe(0);
  });
});

describe('the emulator reads the body with its own reader (spec 02, RFC 7578)', () => {
  const crlf = (parts: string[]) => Buffer.from(parts.join('\r\n'));

  it('reads the three parts, binary content intact, and the quoted boundary', () => {
    const binary = Buffer.from([0x0d, 0x0a, 0x2d, 0x2d, 0xff, 0x00]);
    const body = Buffer.concat([
      crlf([
        '--b0',
        'Content-Disposition: form-data; name="parameter"',
        'Content-Type: application/json; charset=UTF-8',
        '',
        '{}',
        '--b0',
        'Content-Disposition: form-data; name=audio',
        'Content-Type: application/octet-stream',
        '',
        '',
      ]),
      binary,
      crlf([
        '',
        '--b0',
        'Content-Disposition: form-data; name="command"',
        '',
        '{"msg":{"msgname":"stop"}}',
        '--b0--',
        '',
      ]),
    ]);
    const boundary = formBoundary('multipart/form-data; boundary="b0"');
    expect(boundary).toBe('b0');
    const parts = readForm(body, boundary!);
    expect(parts.map((p) => p.name)).toEqual(['parameter', 'audio', 'command']);
    expect(parts[1]!.content.equals(binary)).toBe(true);
    expect(parts[0]!.contentType).toBe('application/json; charset=UTF-8');
  });

  it('refuses what the client’s tolerant parser accepts: LF-only lines, a part with no name', () => {
    const lf = Buffer.from('--b0\nContent-Disposition: form-data; name="parameter"\n\n{}\n--b0--\n');
    expect(parseMultipart(lf, 'b0')).toHaveLength(1);
    expect(() => readForm(lf, 'b0')).toThrow(FormError);
    const nameless = crlf(['--b0', 'Content-Type: text/plain', '', 'x', '--b0--', '']);
    expect(() => readForm(nameless, 'b0')).toThrow(FormError);
    expect(formBoundary('application/json')).toBeUndefined();
  });
});
