/**
 * Personal data in text that is not a conversation: an error's reason, a step failure's, a restart's.
 * Such text names keys, ids and timestamps, so only what proves itself is masked (a phone number's
 * shape, a card's or a My Number's checksum, a postal code after `〒`, an e-mail address; numbers glued
 * to paths or words are left alone). It is the second line of defence: reasons are built from codes and
 * keys, not from what was said, but a message a service echoes could hold anything.
 */
import type { DetectionUtterance } from './call-streams.ts';
import { speakerStreams } from './call-streams.ts';
import { emailSpans } from './emails.ts';
import { maskText } from './masking.ts';
import { numberSpans } from './number-spans.ts';

export function maskPersonalData(text: string): string {
  if (!/[0-9０-９〇一二三四五六七八九@＠]|アット/u.test(text)) return text;
  const utterances: DetectionUtterance[] = [{ index: 0, speaker: 'text', start: 0, end: 0, text }];
  const [stream] = speakerStreams(utterances);
  const spans = [...numberSpans(utterances, stream!, { strict: true }), ...emailSpans(utterances, stream!)];
  return spans.length === 0 ? text : maskText(text, spans).text;
}
