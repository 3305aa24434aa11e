/**
 * The power spectrum of a real frame by PFFFT compiled to WebAssembly with SIMD (npm
 * `@echogarden/pffft-wasm`, pinned; the .wasm ships inside the package, nothing is fetched): about twice
 * as fast as real-fft.ts's own transform on the voice features' 256-point frames in this Node
 * (bench/README.md, speakers, sixth round). Single precision, as PFFFT computes: a bin's power is good to
 * about 1e-6 of the frame's strongest, which the features (log mel energies, a pitch) do not feel.
 *
 * PFFFT's real transforms need n to be a multiple of 32 (with SIMD); real-fft.ts keeps its own for the rest.
 * The module is loaded once, when this file is imported (Emscripten's loader is asynchronous).
 */
import loadPffft from '@echogarden/pffft-wasm/simd';

/** The few entry points of PFFFT's Emscripten module that are used here. */
interface Pffft {
  HEAPF32: Float32Array;
  _pffft_new_setup(n: number, transform: number): number;
  _pffft_aligned_malloc(bytes: number): number;
  _pffft_transform_ordered(
    setup: number,
    input: number,
    output: number,
    work: number,
    direction: number,
  ): void;
}

const PFFFT_REAL = 0;
const PFFFT_FORWARD = 0;
/** PFFFT's least unit of a real transform's length with SIMD. */
const SIMD_REAL_MULTIPLE = 32;
/** Added to every bin, as real-fft.ts does: a silent frame's log energies stay finite. */
const TINY = 1e-10;

const pffft = (await loadPffft()) as Pffft;

/** One length's setup and buffers in the module's memory: `input` and `output` as indices into HEAPF32. */
export interface SimdRealFft {
  n: number;
  setup: number;
  input: number;
  output: number;
  work: number;
}

/** The transform of n points, or null when PFFFT cannot do n (not a multiple of 32). */
export function makeSimdRealFft(n: number): SimdRealFft | null {
  if (n < SIMD_REAL_MULTIPLE || n % SIMD_REAL_MULTIPLE !== 0) return null;
  const setup = pffft._pffft_new_setup(n, PFFFT_REAL);
  const buffer = () => pffft._pffft_aligned_malloc(4 * n);
  const [input, output, work] = [buffer(), buffer(), buffer()];
  return { n, setup, input: input >> 2, output: output >> 2, work };
}

/**
 * The module's memory as floats (HEAPF32): a transform's input is n of them from its `input` index. Taken
 * again for each frame: a grown memory (a later setup's allocation) replaces the array.
 */
export function simdHeap(): Float32Array {
  return pffft.HEAPF32;
}

/** Transforms the input loaded into `heap` (simdHeap) and writes bins 0..n/2's power into `power`. */
export function simdInputPower(f: SimdRealFft, heap: Float32Array, power: Float64Array): void {
  const { n, output } = f;
  pffft._pffft_transform_ordered(f.setup, 4 * f.input, 4 * output, f.work, PFFFT_FORWARD);
  // Ordered output: the DC and Nyquist bins' real parts first, then bin k's real and imaginary parts.
  const dc = heap[output]!;
  const nyquist = heap[output + 1]!;
  power[0] = dc * dc + TINY;
  power[n / 2] = nyquist * nyquist + TINY;
  for (let k = 1, at = output + 2; k < n / 2; k++, at += 2) {
    const re = heap[at]!;
    const im = heap[at + 1]!;
    power[k] = re * re + im * im + TINY;
  }
}
