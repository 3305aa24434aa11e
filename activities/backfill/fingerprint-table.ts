/**
 * A set of strings by 64-bit fingerprint, each with a number (a row index), in typed arrays: what a
 * manifest check remembers of each of up to 500,000 rows is a few numbers, not a string and a map entry
 * per row (bench/README.md, "Hostile probe", has the memory of both). Two strings of one manifest share
 * a fingerprint about once in 10^8 manifests of 500,000 rows (n^2 / 2^65).
 */

/** A 64-bit fingerprint of a string as two 32-bit halves (cyrb53's two lanes, kept whole). */
export function fingerprint(text: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

/** Open addressing (linear probing) over fingerprints; at most half full, doubled when it would be more. */
export class FingerprintTable {
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  /** The number of each slot, or -1 where the slot is empty. */
  private values = new Int32Array(1024).fill(-1);
  private size = 0;

  /** The number stored with `text`, or undefined. */
  get(text: string): number | undefined {
    const [a, b] = fingerprint(text);
    const slot = this.slotOf(a, b);
    return this.values[slot] === -1 ? undefined : this.values[slot];
  }

  /** Stores `value` (a non-negative 31-bit integer) with `text`, replacing what it had. */
  set(text: string, value: number): void {
    if ((this.size + 1) * 2 > this.values.length) this.grow();
    const [a, b] = fingerprint(text);
    const slot = this.slotOf(a, b);
    if (this.values[slot] === -1) this.size += 1;
    this.hi[slot] = a;
    this.lo[slot] = b;
    this.values[slot] = value;
  }

  /** The slot holding this fingerprint, or the empty one where it would go. */
  private slotOf(a: number, b: number): number {
    const mask = this.values.length - 1;
    for (let slot = (a ^ Math.imul(b, 0x9e3779b1)) & mask; ; slot = (slot + 1) & mask) {
      if (this.values[slot] === -1 || (this.hi[slot] === a && this.lo[slot] === b)) return slot;
    }
  }

  private grow(): void {
    const { hi, lo, values } = this;
    this.hi = new Uint32Array(values.length * 2);
    this.lo = new Uint32Array(values.length * 2);
    this.values = new Int32Array(values.length * 2).fill(-1);
    for (let i = 0; i < values.length; i++) {
      if (values[i] === -1) continue;
      const slot = this.slotOf(hi[i]!, lo[i]!);
      this.hi[slot] = hi[i]!;
      this.lo[slot] = lo[i]!;
      this.values[slot] = values[i]!;
    }
  }
}
