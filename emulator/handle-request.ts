/**
 * One request, end to end: its route, the faults injected into it (a dropped connection, a server
 * error page, added latency), the answer written, and the entry in the counters and request log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answer } from './answer.ts';
import type { EmulatorState } from './emulator-state.ts';
import { BodyTooLargeError, sendEmpty, sendJson, sendText } from './http.ts';
import { routeOf, type Route } from './routes.ts';
import type { LogEntry } from './stats.ts';

/** The route's answer, or the answer to its failure: 413 to an oversized body, 500 to anything else. */
async function runRoute(run: Route['run']): Promise<Answer> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof BodyTooLargeError)
      return { status: 413, json: { result: {}, message: err.message, status: 413 } };
    console.error('emulator:', err);
    return { status: 500, json: { result: {}, message: 'emulator error', status: 500 } };
  }
}

function writeAnswer(res: ServerResponse, answer: Answer): void {
  if (answer.text !== undefined) sendText(res, answer.status, answer.text, answer.contentType);
  else if (answer.json !== undefined)
    sendJson(res, answer.status, answer.json, { contentType: answer.contentType, headers: answer.headers });
  else sendEmpty(res, answer.status, answer.headers);
}

/** Counts and logs a request of the service's families (the emulator's own are not evidence). */
function recordRequest(
  emu: EmulatorState,
  req: IncomingMessage,
  path: string,
  route: Route,
  began: number,
  answer: Pick<Answer, 'status' | 'log'>,
  fault: string | undefined,
): void {
  const entry: LogEntry = {
    time: new Date().toISOString(),
    method: req.method ?? 'GET',
    endpoint: path,
    status: answer.status,
    ms: Math.round((performance.now() - began) * 100) / 100,
    ...answer.log,
    ...(fault ? { fault } : {}),
  };
  if (route.family !== 'admin') {
    emu.stats.record(entry);
    emu.log.write(entry);
  }
}

export async function handleRequest(
  emu: EmulatorState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const began = performance.now();
  const path = (req.url ?? '/').split('?')[0]!;
  const route = await routeOf(emu, req, path);
  const { family } = route;
  let fault: string | undefined;
  let answer: Answer;
  if (family !== 'admin' && emu.faults.dropConnection(family)) {
    req.socket.destroy();
    recordRequest(
      emu,
      req,
      path,
      route,
      began,
      { status: 0, log: { fault: 'dropConnection' } },
      'dropConnection',
    );
    return;
  }
  const serverError = family !== 'admin' ? emu.faults.serverError(family) : undefined;
  if (serverError) {
    fault = 'serverError';
    answer = { status: serverError.status, text: serverError.body, contentType: 'text/html' };
  } else {
    answer = await runRoute(route.run);
  }
  const latency = family !== 'admin' ? emu.faults.latencyMs(family) : 0;
  if (latency > 0) {
    fault ??= 'latency';
    await new Promise((r) => setTimeout(r, latency));
  }
  if (res.destroyed) return;
  writeAnswer(res, answer);
  answer.onSent?.();
  recordRequest(emu, req, path, route, began, answer, fault);
}
