/** cli/commands/watch.ts: durations and the watch's id (stable, no personal data). */
import { describe, expect, it } from 'vitest';
import { durationSeconds, watchIdOf } from '../../cli/commands/watch.ts';
import { watchInputSchema } from '../../schemas/watch.ts';

const output = { bucket: 'results', prefix: 'out/' };

describe('callpipe watch', () => {
  it('reads durations with a unit, a bare number as seconds, and refuses others by name', () => {
    expect(durationSeconds('settle', '30s')).toBe(30);
    expect(durationSeconds('settle', '2m')).toBe(120);
    expect(durationSeconds('settle', '1.5h')).toBe(5400);
    expect(durationSeconds('settle', '500ms')).toBe(0.5);
    expect(durationSeconds('settle', '45')).toBe(45);
    expect(durationSeconds('settle', '0')).toBe(0);
    expect(durationSeconds('settle', undefined)).toBeUndefined();
    expect(() => durationSeconds('settle', 'soon')).toThrow(/--settle must be a duration/);
    expect(() => durationSeconds('poll', '-1s')).toThrow(/--poll/);
  });

  it('names a watch by its prefix and output, the same each time, another for another output', () => {
    const id = watchIdOf({ bucket: 'calls', prefix: 'center/incoming/' }, output);
    expect(id).toMatch(/^watch-center-incoming-[0-9a-f]{10}$/);
    expect(watchIdOf({ bucket: 'calls', prefix: 'center/incoming/' }, output)).toBe(id);
    expect(
      watchIdOf({ bucket: 'calls', prefix: 'center/incoming/' }, { bucket: 'results', prefix: 'b/' }),
    ).not.toBe(id);
    expect(() => watchInputSchema.shape.watchId.parse(id)).not.toThrow();
  });

  it('keeps a number or an address of the prefix out of the id', () => {
    const id = watchIdOf({ bucket: 'calls', prefix: 'customers/09012345678/' }, output);
    expect(id).not.toMatch(/\d{7}/);
    expect(id).toMatch(/^watch-prefix-[0-9a-f]{10}$/);
    expect(watchIdOf({ bucket: 'calls', prefix: 'agents/taro@example.com/' }, output)).not.toContain(
      'example',
    );
  });
});
