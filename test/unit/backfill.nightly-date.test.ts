import { describe, expect, it } from 'vitest';
import { dayBefore, fillTemplate, parsePrefixUrl, templateProblem } from '../../workflows/nightly-date.ts';

describe('nightly date', () => {
  it('takes the previous day in the schedule time zone', () => {
    // 2024-03-01 02:00 in Tokyo is still 2024-02-29 in UTC.
    const at = new Date('2024-02-29T17:00:00Z');
    expect(dayBefore(at, 'Asia/Tokyo')).toEqual({ yyyy: '2024', mm: '02', dd: '29' });
    expect(dayBefore(at, 'UTC')).toEqual({ yyyy: '2024', mm: '02', dd: '28' });
    expect(dayBefore(new Date('2025-01-01T00:30:00Z'), 'UTC')).toEqual({ yyyy: '2024', mm: '12', dd: '31' });
    expect(dayBefore(new Date('2025-01-01T00:30:00Z'), 'UTC', 0)).toEqual({
      yyyy: '2025',
      mm: '01',
      dd: '01',
    });
  });

  it('fills templates and checks them', () => {
    const day = { yyyy: '2024', mm: '05', dd: '07' };
    expect(fillTemplate('s3://b/recordings/{yyyy}/{mm}/{dd}/', day)).toBe('s3://b/recordings/2024/05/07/');
    expect(fillTemplate('s3://b/r/{date}', day)).toBe('s3://b/r/2024-05-07');
    expect(parsePrefixUrl('s3://b/r/2024-05-07')).toEqual({ bucket: 'b', prefix: 'r/2024-05-07/' });
    expect(templateProblem('s3://b/recordings/{yyyy}/{mm}/{dd}/')).toBeUndefined();
    expect(templateProblem('s3://b/recordings/')).toMatch(/no \{dd\}/);
    expect(templateProblem('s3://b/{yyyy}/{month}/{dd}/')).toMatch(/unknown placeholder/);
    expect(templateProblem('/local/{dd}')).toMatch(/not an s3/);
  });
});
