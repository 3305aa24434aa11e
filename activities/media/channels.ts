/**
 * Channels → speakers. A stereo call is two speakers, each recognized on its own (default channel 0 =
 * agent, channel 1 = customer); mono is one speaker; a file of more channels is mixed down unless
 * channels are picked; `mode: 'mix'` mixes a stereo call too.
 */
import type { ChannelOptions, Track } from '../../schemas/plan.ts';
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
