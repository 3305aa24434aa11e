/**
 * Silence lists. A mixed track is silent where all its channels are. (The silences themselves come from
 * the channel analysis: channel-analysis.ts.)
 */
import type { Silence } from '../../schemas/plan.ts';

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
