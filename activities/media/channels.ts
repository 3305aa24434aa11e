/**
 * Channels → speakers. A stereo call is two speakers, each recognized on its own (default channel 0 =
 * agent, channel 1 = customer); mono is one speaker; a file of more channels is mixed down unless
 * channels are picked; `mode: 'mix'` mixes a stereo call too.
 */
import type { ChannelFacts, ChannelOptions, Track } from '../../schemas/plan.ts';
import { MediaError } from './errors.ts';

export const DEFAULT_SPEAKERS = ['agent', 'customer'] as const;
/** Speaker of a track that hears everyone (mono or mixed down). */
export const MIXED_SPEAKER = 'mixed';

function speakerOf(channel: number, options: ChannelOptions): string {
  return options.speakers?.[channel] ?? DEFAULT_SPEAKERS[channel] ?? `channel-${channel}`;
}

/** The tracks to recognize for a file of `channelCount` channels. */
export function planTracks(channelCount: number, options: ChannelOptions = {}): Track[] {
  const pick = options.pick ?? [...Array(channelCount).keys()];
  for (const c of pick) {
    if (c >= channelCount) {
      throw new MediaError(
        'invalid-option',
        `channel ${c} was picked but the recording has ${channelCount} channel(s)`,
      );
    }
  }
  if (new Set(pick).size !== pick.length)
    throw new MediaError('invalid-option', 'a channel was picked twice');

  const mix = options.mode === 'mix' || (options.mode === undefined && !options.pick && channelCount > 2);
  if (pick.length === 1 && channelCount === 1) {
    return [{ track: 0, channel: 0, sourceChannels: [0], speaker: options.speakers?.[0] ?? MIXED_SPEAKER }];
  }
  if (mix && pick.length > 1)
    return [{ track: 0, channel: 'mix', sourceChannels: pick, speaker: MIXED_SPEAKER }];
  return pick.map((c, track) => ({ track, channel: c, sourceChannels: [c], speaker: speakerOf(c, options) }));
}

/** ffmpeg `pan` filter that turns the source into the track's one channel (equal gains when mixing, no clipping). */
export function panFilter(track: Pick<Track, 'sourceChannels'>): string {
  const gain = 1 / track.sourceChannels.length;
  const sum = track.sourceChannels
    .map((c) => (track.sourceChannels.length === 1 ? `c${c}` : `${gain}*c${c}`))
    .join('+');
  return `pan=mono|c0=${sum}`;
}

/**
 * The tracks once the channel analysis is known: a channel that carries the same signal as another
 * (mono up-mixed to stereo) is not recognized a second time, and the track that hears it is `mixed`
 * (it hears everyone); a channel silent for the whole call is not recognized (nor mixed in, where it
 * would only lower the level). When every channel is silent the tracks stay as they were: the call is
 * still processed, to an empty transcript. Returns the tracks (renumbered) and the decisions in words.
 */
export function applyChannelAnalysis(
  tracks: Track[],
  facts: ChannelFacts[],
  options: ChannelOptions = {},
): { tracks: Track[]; decisions: string[] } {
  if (options.detect === false) return { tracks, decisions: [] };
  const byChannel = new Map(facts.map((f) => [f.channel, f]));
  const dropped = (c: number) => {
    const f = byChannel.get(c);
    return f !== undefined && f.status !== 'speech';
  };
  const used = new Set(tracks.flatMap((t) => t.sourceChannels));
  if ([...used].every((c) => byChannel.get(c)?.status === 'silent')) return { tracks, decisions: [] };

  const decisions: string[] = [];
  for (const c of [...used].sort((a, b) => a - b)) {
    const f = byChannel.get(c);
    if (f?.status === 'silent')
      decisions.push(
        `channel ${c} is silent for the whole call (nothing above ${f.silenceThresholdDb} dBFS): not recognized`,
      );
    if (f?.status === 'duplicate' && f.duplicateOf !== undefined && used.has(f.duplicateOf))
      decisions.push(
        `channel ${c} carries the same signal as channel ${f.duplicateOf} (correlation ${f.correlation}): recognized once, as '${MIXED_SPEAKER}'`,
      );
  }
  const merged = new Set(
    facts.filter((f) => f.status === 'duplicate' && used.has(f.channel)).map((f) => f.duplicateOf),
  );
  const out = tracks
    .map((t) => ({ ...t, sourceChannels: t.sourceChannels.filter((c) => !dropped(c)) }))
    .filter((t) => t.sourceChannels.length > 0)
    .map((t, track) => {
      const channel = t.sourceChannels.length === 1 ? t.sourceChannels[0]! : t.channel;
      const hearsEveryone = t.sourceChannels.some((c) => merged.has(c));
      return { ...t, track, channel, speaker: hearsEveryone ? MIXED_SPEAKER : t.speaker };
    });
  return { tracks: out, decisions };
}
