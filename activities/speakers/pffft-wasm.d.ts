/** PFFFT's Emscripten module (simd-fft.ts): the package ships no types; its factory resolves to the module. */
declare module '@echogarden/pffft-wasm/simd' {
  const load: () => Promise<unknown>;
  export default load;
}
