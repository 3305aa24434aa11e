/**
 * A short random id for a test run's keys, prefixes and batch ids. Letters only: a run of seven digits
 * in random hex (one run in twenty or so) would make a key look like a caller's number to the call-id,
 * report and manifest rules, and the test would meet those rules by chance.
 */
import { randomBytes } from 'node:crypto';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

export function runId(length = 8): string {
  return [...randomBytes(length)].map((b) => LETTERS[b % LETTERS.length]).join('');
}
