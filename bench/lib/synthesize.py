"""Speech for the speakers benchmark and tests: lines spoken by two synthesizers, as 16-kHz float32.

Run by bench/lib/speech-synth.ts through the project's venv (.tools/venv, set up by
scripts/bootstrap.mjs --test). Reads one JSON request per line on stdin, writes its samples (raw
little-endian float32, mono, 16 kHz, trimmed to the audible part) to its `out` path and answers "ok" (or
"error: ...") on a line of stdout, so one process serves a whole corpus. Nothing is downloaded: both
voices ship inside their wheels.

  {"engine": "openjtalk", "text": "...", "halfTone": -9, "formant": 0.84, "speed": 1.1, "out": "..."}
      Open JTalk's HTS voice (PyPI pyopenjtalk-plus). A person differs from the voice by pitch
      (`halfTone` semitones), vocal-tract length (`formant`: every formant times this factor) and rate
      (`speed`). Formants move by resampling: the voice is synthesized at a pitch and speed that the
      resampling then brings back to the ones asked, so only the spectral envelope keeps the factor.
  {"engine": "espeak", "text": "...", "variant": "m3", "pitch": 50, "speed": 160, "out": "..."}
      espeak-ng's Japanese voice with one of its variants (PyPI espeakng-loader ships the library and
      its data), pitch 0-99 and words per minute.
"""

import contextlib
import ctypes
import json
import math
import sys

import numpy as np

RATE = 16000


def resample(x, rate_in, rate_out):
    """Band-limited resampling of the whole signal through its spectrum."""
    n_out = max(1, int(round(len(x) * rate_out / rate_in)))
    spectrum = np.fft.rfft(x)
    bins = n_out // 2 + 1
    if len(spectrum) >= bins:
        spectrum = spectrum[:bins]
    else:
        spectrum = np.concatenate([spectrum, np.zeros(bins - len(spectrum), dtype=spectrum.dtype)])
    return np.fft.irfft(spectrum, n_out) * (n_out / len(x))


def trimmed(x):
    audible = np.nonzero(np.abs(x) > 0.01)[0]
    if len(audible) == 0:
        return x[:0]
    first = max(0, audible[0] - 80)
    last = min(len(x), audible[-1] + 80)
    return x[first:last]


def openjtalk(request):
    import pyopenjtalk

    formant = float(request.get("formant", 1.0))
    speed = float(request.get("speed", 1.0))
    half_tone = float(request.get("halfTone", 0.0))
    # Played back `formant` times as fast, every frequency moves by that factor and the duration by its
    # inverse: synthesize the pitch that far the other way and the rate that much slower.
    x, rate = pyopenjtalk.tts(
        request["text"],
        speed=speed / formant,
        half_tone=half_tone - 12 * math.log2(formant),
    )
    x = np.asarray(x, dtype=np.float64) / 32768.0
    return resample(x, rate * formant, RATE)


class Espeak:
    def __init__(self):
        import espeakng_loader

        self.lib = ctypes.cdll.LoadLibrary(espeakng_loader.get_library_path())
        self.chunks = []
        callback_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)

        def on_audio(wav, count, _events):
            if count > 0:
                self.chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
            return 0

        self.callback = callback_type(on_audio)
        # AUDIO_OUTPUT_SYNCHRONOUS = 2: samples come to the callback, nothing is played.
        self.rate = self.lib.espeak_Initialize(2, 0, espeakng_loader.get_data_path().encode(), 0)
        if self.rate <= 0:
            raise RuntimeError("espeak-ng could not start")
        self.lib.espeak_SetSynthCallback(self.callback)

    def say(self, request):
        voice = f"ja+{request.get('variant', 'm1')}".encode()
        if self.lib.espeak_SetVoiceByName(voice) != 0:
            raise RuntimeError(f"espeak-ng has no voice {voice.decode()}")
        # espeakRATE = 1, espeakPITCH = 3
        self.lib.espeak_SetParameter(1, int(request.get("speed", 160)), 0)
        self.lib.espeak_SetParameter(3, int(request.get("pitch", 50)), 0)
        self.chunks = []
        text = request["text"].encode("utf-8")
        # espeakCHARS_UTF8 = 1, position type POS_CHARACTER = 1
        self.lib.espeak_Synth(text, len(text) + 1, 0, 1, 0, 1, None, None)
        self.lib.espeak_Synchronize()
        x = np.concatenate(self.chunks).astype(np.float64) / 32768.0 if self.chunks else np.zeros(0)
        return resample(x, self.rate, RATE) if len(x) else x


def main():
    # pyopenjtalk prints a notice on import (an optional model it does without): stdout carries answers only.
    with contextlib.redirect_stdout(sys.stderr):
        import pyopenjtalk  # noqa: F401
    espeak = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request["engine"] == "openjtalk":
                x = openjtalk(request)
            elif request["engine"] == "espeak":
                espeak = espeak or Espeak()
                x = espeak.say(request)
            else:
                raise ValueError(f"unknown engine {request['engine']}")
            trimmed(x).astype("<f4").tofile(request["out"])
            print("ok", flush=True)
        except Exception as error:  # one bad request is reported, the process serves the next
            print(f"error: {error}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
