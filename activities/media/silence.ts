/**
 * Silence scan: one ffmpeg `silencedetect` pass over all channels at once (`mono=1` reports each
 * channel apart), parsed from its log lines. A mixed track is silent where all its channels are.
 */
import type { Silence } from '../../schemas/plan.ts';
import { runFfmpeg } from './ffmpeg.ts';

export interface SilenceScanOptions {
  /** Audio stream index in the file (ProbeResult.streamIndex). Default 0. */
  streamIndex?: number;
  /** Channels of the stream (ProbeResult.channels). */
  channels: number;
  /** Quieter than this is silence, dBFS. Default -30. */
  noiseDb?: number;
  /** Shortest silence reported, seconds. Default 0.3. */
  minSeconds?: number;
  /** Length of the recording: closes a silence still open at the end. */
  durationSeconds?: number;
  signal?: AbortSignal;
}

const SILENCE_LINE = /silencedetect @ [^\]]*\]\s*(?:channel: (\d+) \| )?silence_(start|end): (-?[\d.]+)/;

/** Silences per source channel, in time order. */
export async function scanSilences(path: string, options: SilenceScanOptions): Promise<Silence[][]> {
  const { channels, noiseDb = -30, minSeconds = 0.3 } = options;
  const silences: Silence[][] = Array.from({ length: channels }, () => []);
  const open: (number | undefined)[] = Array.from({ length: channels }, () => undefined);
  const filter = `silencedetect=noise=${noiseDb}dB:d=${minSeconds}${channels > 1 ? ':mono=1' : ''}`;
  await runFfmpeg(
    ['-v', 'info', '-i', path, '-map', `0:${options.streamIndex ?? 0}`, '-af', filter, '-f', 'null', '-'],
    {
      signal: options.signal,
      onStderrLine(line) {
        const m = SILENCE_LINE.exec(line);
        if (!m) return;
        const channel = m[1] === undefined ? 0 : Number(m[1]);
        const at = Math.max(0, Number(m[3]));
        if (channel >= channels) return;
        if (m[2] === 'start') open[channel] = at;
        else {
          silences[channel]!.push({ start: open[channel] ?? 0, end: at });
          open[channel] = undefined;
        }
      },
    },
  );
  open.forEach((start, channel) => {
    if (start !== undefined && options.durationSeconds !== undefined && options.durationSeconds > start) {
      silences[channel]!.push({ start, end: options.durationSeconds });
    }
  });
  return silences;
}

/** Where every list is silent at once (the silences of a mix of those channels). */
export function intersectSilences(lists: Silence[][]): Silence[] {
  if (lists.length === 0) return [];
  return lists.slice(1).reduce<Silence[]>((acc, list) => {
    const out: Silence[] = [];
    let i = 0;
    let j = 0;
    while (i < acc.length && j < list.length) {
      const a = acc[i]!;
      const b = list[j]!;
      const start = Math.max(a.start, b.start);
      const end = Math.min(a.end, b.end);
      if (end > start) out.push({ start, end });
      if (a.end < b.end) i++;
      else j++;
    }
    return out;
  }, lists[0]!);
}
