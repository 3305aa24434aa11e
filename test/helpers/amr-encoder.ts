/**
 * AMR-NB with discontinuous transmission, as phones record calls: the test corpus's only use of sox
 * (Debian's, with libopencore-amrnb; cli/tools/provision.ts installs it). sox's AMR-NB writer runs the
 * encoder with DTX on, so silences and line noise become comfort-noise (SID) and NO_DATA frames.
 */
import { spawnSync } from 'node:child_process';
import { ensureAmrEncoder } from '../../cli/tools/provision.ts';

/** AMR-NB mode 7 (12.2 kbit/s), the rate phones use on a good line. */
const AMR_NB_MODE = 7;

/** Encodes an 8-kHz mono WAV to an AMR-NB storage-format file (`#!AMR\n` and 20-ms frames). */
export function encodeAmrNb(wav: string, out: string): void {
  const sox = ensureAmrEncoder();
  const res = spawnSync(sox, [wav, '-t', 'amr-nb', '-C', String(AMR_NB_MODE), out], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`sox could not encode ${wav} to AMR-NB: ${res.stderr.trim()}`);
}
