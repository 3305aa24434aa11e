/** A call script's speech per channel, and the silences between (as the channel analysis finds them, ≥ 0.3 s). */
import { phraseDurationSeconds, type FixtureScript } from '../../schemas/synthetic-recording.ts';
import type { Silence } from '../../schemas/plan.ts';

export function speechAndSilences(script: FixtureScript, durationSeconds: number) {
  const speech = script.channels.map((ch) =>
    ch.phrases
      .map((p) => ({ start: p.start, end: p.start + phraseDurationSeconds(p.id) }))
      .sort((a, b) => a.start - b.start),
  );
  const silences = speech.map((list) => {
    const out: Silence[] = [];
    let at = 0;
    for (const s of list) {
      if (s.start - at >= 0.3) out.push({ start: at, end: s.start });
      at = Math.max(at, s.end);
    }
    if (durationSeconds - at >= 0.3) out.push({ start: at, end: durationSeconds });
    return out;
  });
  return { speech, silences };
}
