/**
 * Which separator tells the voices of a one-track call apart: the speaker-embedding model
 * (embedding-separation.ts) when `CALLPIPE_SPEAKER_MODEL` allows it and the model is installed, else the
 * voice-feature method (voice-separation.ts). The model is loaded once per process.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { processSettings } from '../../schemas/process-settings.ts';
import { DEFAULT_SPEAKER_MODEL_DIR, speakerModelChoice } from '../../schemas/speaker-model.ts';
import { separateByEmbedding, type EmbeddingOptions } from './embedding-separation.ts';
import { loadEncoder, type Ge2eEncoder } from './ge2e-encoder.ts';
import type { SeparationResult } from './line-separation.ts';
import { separateVoices, type AudioReader, type UtteranceSpan } from './voice-separation.ts';

export interface VoiceSeparator {
  /** `ge2e`: the embedding model; `features`: the voice-feature method. */
  method: 'ge2e' | 'features';
  /** Why the voice-feature method is used when the model was asked for but cannot be (a user can read it). */
  note?: string;
  separate(audio: AudioReader, spans: readonly UtteranceSpan[], options?: EmbeddingOptions): SeparationResult;
}

const loaded = new Map<string, Ge2eEncoder | Error>();

function encoderIn(dir: string): Ge2eEncoder | Error {
  let known = loaded.get(dir);
  if (!known) {
    try {
      known = loadEncoder(dir);
    } catch (err) {
      known = err as Error;
    }
    loaded.set(dir, known);
  }
  return known;
}

const byFeatures = (note?: string): VoiceSeparator => ({
  method: 'features',
  ...(note ? { note } : {}),
  separate: (audio, spans, options) => separateVoices(audio, spans, options),
});

/** The separator `CALLPIPE_SPEAKER_MODEL` chooses (see schemas/speaker-model.ts). */
export function voiceSeparator(setting = processSettings().speakerModel): VoiceSeparator {
  const choice = speakerModelChoice(setting);
  if (choice.kind === 'off') return byFeatures();
  const dir = choice.kind === 'dir' ? choice.dir : DEFAULT_SPEAKER_MODEL_DIR;
  if (choice.kind === 'auto' && !existsSync(join(dir, 'manifest.json'))) return byFeatures();
  const encoder = encoderIn(dir);
  if (encoder instanceof Error) return byFeatures(`the speaker model could not be used: ${encoder.message}`);
  return {
    method: 'ge2e',
    separate: (audio, spans, options) => separateByEmbedding(encoder, audio, spans, options),
  };
}
