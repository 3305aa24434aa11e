/**
 * How ffmpeg is to read a recording. Containers name their own format; headerless telephony formats
 * (what PBXs and call recorders write: raw G.711, G.722, GSM, Asterisk's SLN…) carry no header, and
 * ffmpeg can only choose their reader from the file name's extension or from `-f` before `-i`. Our
 * local copies are named by a hash, so the choice is made here once, from the object's name, and
 * travels with the probe's result (`ProbeResult.reader`) to every ffmpeg run on the recording.
 *
 * The one table of headerless formats is `RAW_TELEPHONY_FORMATS` (schemas/media-formats.ts). A file whose extension is in
 * it but whose first bytes are a known container (a `.ulaw` that is really a WAV) is read as what its
 * content says.
 */
import type { InputReader } from '../../schemas/media-probe.ts';
import { rawFormatOf } from '../../schemas/media-formats.ts';
import { sniffContainer } from './sniff.ts';

/** Reading by content: what ffmpeg does when nothing is forced. */
export const READ_BY_CONTENT: Readonly<InputReader> = Object.freeze({
  format: null,
  options: {},
  repair: null,
});

/**
 * The reader of a recording named `name` whose first bytes are `head`: its content's when a container
 * header says what it is, the table's when the extension names a headerless format, else ffmpeg's own
 * guess from the content.
 */
export function readerOf(name: string, head: Buffer): InputReader {
  const raw = rawFormatOf(name);
  if (!raw || sniffContainer(head)?.strong) return { ...READ_BY_CONTENT, options: {} };
  return { format: raw.demuxer, options: { ...raw.options }, repair: null };
}

/** ffmpeg's (and ffprobe's) arguments that go before `-i` to read with `reader`. */
export function readerArgs(reader: InputReader | undefined): string[] {
  if (!reader?.format) return [];
  return ['-f', reader.format, ...Object.entries(reader.options).flatMap(([k, v]) => [`-${k}`, v])];
}
