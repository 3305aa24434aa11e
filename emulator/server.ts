/**
 * The Language Analysis Service emulator: one node:http server answering the token endpoint, text
 * analysis and speech recognition at the addresses real clients use:
 *
 *   POST /v1/oauth/accesstokens                                   token (spec 01, Authentication)
 *   POST /api/dev/nlp/<version>/<endpoint>, /api/nlp/...          text analysis (spec 01, 03)
 *   POST /api/asr/v1/speech_recognition/<model>, /api/dev/asr/... file and stream recognition (spec 02)
 *   POST|GET /api/asr/v1/speech_words/<model>/<upload|clear|isset|download>   user dictionary (spec 02)
 *   GET  /emulator/stats, POST /emulator/stats/reset, POST /emulator/faults   evidence and control
 *
 * so `${url}/api/dev` serves as the one base URL of both families. Plain HTTP on 127.0.0.1.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EmulatorState } from './emulator-state.ts';
import { handleRequest } from './handle-request.ts';
import { sendJson } from './http.ts';
import type { EmulatorOptions, RunningEmulator } from './options.ts';

export type { EmulatorOptions, EmulatorStats, RunningEmulator } from './options.ts';

/** Clients keep connections alive across a whole session; ours stay open a little longer than theirs. */
const KEEP_ALIVE_TIMEOUT_MS = 10_000;

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emu = new EmulatorState(options);
  const primary = emu.accounts.all()[0]!;
  const server = createServer((req, res) => {
    handleRequest(emu, req, res).catch((err: unknown) => {
      console.error('emulator:', err);
      if (!res.headersSent) sendJson(res, 500, { result: {}, message: 'emulator error', status: 500 });
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host && options.host !== '0.0.0.0' ? options.host : '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    port,
    url,
    baseUrl: `${url}/api/dev`,
    authUrl: `${url}/v1/oauth/accesstokens`,
    clientId: primary.clientId,
    clientSecret: primary.clientSecret,
    domainId: primary.domainIds[0]!,
    stats: () => emu.snapshot(),
    pacing: (uniqueId) => emu.sessions.pacing(uniqueId),
    resetStats: () => emu.resetStats(),
    setFaults: (faults) => emu.setFaults(faults),
    close: async () => {
      emu.sessions.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await emu.log.close();
    },
  };
}
