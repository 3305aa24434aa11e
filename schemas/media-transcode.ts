/**
 * Session audio as the recognizer takes it (spec 02, Audio formats): raw, header-less, one channel.
 * `mulaw`: 8 kHz 8-bit mu-law for the 8 kHz models; `pcm16k`: 16 kHz 16-bit little-endian PCM for the
 * 16 kHz models.
 */

export type SessionAudioFormat = 'mulaw' | 'pcm16k';

/** Bytes per second of each format: a session of N s is exactly N × this many bytes. */
const SESSION_AUDIO_BYTES_PER_SECOND: Record<SessionAudioFormat, number> = {
  mulaw: 8000,
  pcm16k: 32000,
};

/**
 * The bytes [start, end) of a session's 8-kHz mu-law audio within the staged object that holds it:
 * placed by where the object starts on the recording's clock (`audioStart`: 0 for a whole staged track;
 * absent, an object of the session alone, which starts at the session).
 */
export function sessionByteRange(session: { start: number; end: number; audioStart?: number | undefined }): {
  start: number;
  end: number;
} {
  const objectStart = session.audioStart ?? session.start;
  const rate = SESSION_AUDIO_BYTES_PER_SECOND.mulaw;
  return {
    start: Math.round((session.start - objectStart) * rate),
    end: Math.round((session.end - objectStart) * rate),
  };
}
