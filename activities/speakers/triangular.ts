/** Triangular matrices of the separators' voice models (row-major, `d` × `d`). */

/** The inverse of the lower-triangular `l` (its diagonal non-zero), itself lower-triangular. */
export function lowerInverse(l: Float64Array, d: number): Float64Array {
  const inverse = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    inverse[i * d + i] = 1 / l[i * d + i]!;
    for (let j = 0; j < i; j++) {
      let v = 0;
      for (let k = j; k < i; k++) v -= l[i * d + k]! * inverse[k * d + j]!;
      inverse[i * d + j] = v / l[i * d + i]!;
    }
  }
  return inverse;
}
