/**
 * The speaker-embedding model of the speakers stage (docs/speakers.md): Resemblyzer's GE2E voice encoder,
 * from the PyPI wheel pinned here, converted at `callpipe tools` time (cli/tools/speaker-model.ts) into raw
 * float32 weights and this manifest under `.tools/speaker-model/ge2e/`. The stage reads the manifest with
 * this schema; `CALLPIPE_SPEAKER_MODEL` chooses it (see {@link speakerModelChoice}).
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The wheel the weights come from, pinned by version and hash (Apache-2.0). */
export const GE2E_WHEEL = {
  package: 'resemblyzer',
  version: '0.1.4',
  file: 'Resemblyzer-0.1.4-py3-none-any.whl',
  sha256: '8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f',
  member: 'resemblyzer/pretrained.pt',
} as const;

/** Where `callpipe tools` puts the converted model. */
export const DEFAULT_SPEAKER_MODEL_DIR = fileURLToPath(
  new URL('../.tools/speaker-model/ge2e/', import.meta.url),
);

export const speakerModelManifestSchema = z.object({
  format: z.literal('ge2e-f32-v1'),
  /** Each tensor's shape and where its elements start in weights.f32 (little-endian float32). */
  tensors: z.array(
    z.object({
      name: z.string(),
      shape: z.array(z.number().int().positive()),
      offset: z.number().int().nonnegative(),
    }),
  ),
  elements: z.number().int().positive(),
  /** The wheel converted, as {@link GE2E_WHEEL} (written by the tools step). */
  source: z.object({ package: z.string(), version: z.string(), sha256: z.string() }).optional(),
});
export type SpeakerModelManifest = z.infer<typeof speakerModelManifestSchema>;

/**
 * `CALLPIPE_SPEAKER_MODEL`: `auto`, the model when installed and else the voice-feature method; unset or
 * `off`, the voice-feature method; a directory, the model converted there.
 */
export type SpeakerModelChoice = { kind: 'auto' } | { kind: 'off' } | { kind: 'dir'; dir: string };

export function speakerModelChoice(value: string | undefined): SpeakerModelChoice {
  const v = value?.trim();
  if (v === 'auto') return { kind: 'auto' };
  if (!v || v === 'off') return { kind: 'off' };
  return { kind: 'dir', dir: v };
}
