/** Recognition models and what each allows (spec 02, "Recognition models" and "Behavior of the options"). */
export interface ModelInfo {
  /** The model's bandwidth: the lowest sampling rate accepted. */
  rate: 8000 | 16000;
  /** mu-law is available only on the three 8 kHz models. */
  mulaw: boolean;
  filler: boolean;
  punctuation: boolean;
  reading: boolean;
}

export const MODELS: Readonly<Record<string, ModelInfo>> = {
  'ja-gen_tf-16': { rate: 16000, mulaw: false, filler: true, punctuation: true, reading: true },
  'ja-gen_sf-16': { rate: 16000, mulaw: false, filler: true, punctuation: false, reading: true },
  'ja-gen_tf-08': { rate: 8000, mulaw: true, filler: true, punctuation: true, reading: true },
  'ja-mdl1_nrw-08': { rate: 8000, mulaw: true, filler: true, punctuation: true, reading: true },
  'ja-mdl2_nrw-08': { rate: 8000, mulaw: true, filler: true, punctuation: true, reading: true },
  'en_en-gen_sf-16': { rate: 16000, mulaw: false, filler: false, punctuation: false, reading: false },
};
