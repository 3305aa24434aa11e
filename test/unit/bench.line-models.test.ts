import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { trainingSet } from '../../activities/reasons/training-rows.ts';
import { readTrainingCsv } from '../../schemas/classifier-dataset.ts';
import { TRAINING_LIMITS } from '../../schemas/classifier-limits.ts';
import {
  CHOOSING,
  finalLinesCsv,
  finalSplits,
  load,
  OTHER,
  SETS,
  shippedLinesPath,
} from '../../bench/lib/line-models.ts';

const shipped = SETS.map((set) => ({ set, ...finalLinesCsv(set) }));

describe('the shipped line models’ training files (activities/insights/line-models/)', () => {
  it.each(shipped)(
    '$set: the file is the lines of bench/data its final model trains on',
    ({ category, csv }) => {
      expect(readFileSync(shippedLinesPath(category), 'utf8')).toBe(csv);
    },
  );

  it('holds one file per set and nothing else (a renamed category leaves no stale file)', () => {
    const dir = fileURLToPath(new URL('.', shippedLinesPath('x')));
    expect(readdirSync(dir).sort()).toEqual(shipped.map((s) => `${s.category}.ja.csv`).sort());
  });

  it.each(shipped)(
    '$set: `callpipe reasons train` takes it (spec 03 limits, two classes)',
    async ({ category }) => {
      const file = readFileSync(shippedLinesPath(category));
      expect(file.length).toBeLessThanOrEqual(TRAINING_LIMITS.bytes);
      const { rows, problems } = readTrainingCsv(file);
      expect(problems).toEqual([]);
      expect(rows.length).toBeLessThanOrEqual(TRAINING_LIMITS.lines);
      expect(new Set(rows.map((r) => r.class))).toEqual(new Set([category, OTHER]));
      // What the command reads: `class,text` lines as they are (no stored result is looked up).
      const set = await trainingSet(file, () => {
        throw new Error('class,text lines read no result');
      });
      expect(set).toEqual({ rows, problems: [], text: null });
    },
  );

  it('trains complaints on the choosing splits, harassment and NG words on dev + calib', () => {
    expect(finalSplits('complaints')).toBe(CHOOSING.complaints);
    expect(finalSplits('harassment')).toEqual(['dev', 'calib']);
    expect(finalSplits('ng-words')).toEqual(['dev', 'calib']);
  });

  it('labels every line of a positive call with the category and of a negative call `other`', () => {
    const { category, csv } = finalLinesCsv('harassment');
    const splits = finalSplits('harassment').map((split) => load('harassment', split));
    const rows = readTrainingCsv(csv).rows.map((r) => ({ class: r.class, text: r.text }));
    expect(rows).toEqual([
      ...splits.flatMap((s) => s.positives.flat()).map((text) => ({ class: category, text })),
      ...splits.flatMap((s) => s.negatives.flat()).map((text) => ({ class: OTHER, text })),
    ]);
  });
});
