import { describe, expect, it } from 'vitest';
import { formatFull, formatRelative } from './time';

// Build dates in local time so the tests do not depend on the machine's zone.
const now = new Date(2025, 2, 15, 12, 0, 0); // 15 Mar 2025 12:00 local

function at(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): string {
  return new Date(y, mo, d, h, mi, s).toISOString();
}

describe('formatRelative', () => {
  it('says just now for recent and slightly-future times', () => {
    expect(formatRelative(at(2025, 2, 15, 11, 59, 30), now)).toBe('just now');
    expect(formatRelative(at(2025, 2, 15, 12, 0, 20), now)).toBe('just now');
  });

  it('counts minutes within the hour', () => {
    expect(formatRelative(at(2025, 2, 15, 11, 55), now)).toBe('5 min ago');
    expect(formatRelative(at(2025, 2, 15, 11, 59, 10), now)).toBe('1 min ago');
  });

  it('shows the time for earlier today and yesterday', () => {
    expect(formatRelative(at(2025, 2, 15, 8, 7), now)).toBe('today 08:07');
    expect(formatRelative(at(2025, 2, 14, 23, 30), now)).toBe('yesterday 23:30');
  });

  it('shows day and month, with the year only when different', () => {
    expect(formatRelative(at(2025, 0, 3, 10), now)).toBe('3 Jan');
    expect(formatRelative(at(2023, 11, 31, 10), now)).toBe('31 Dec 2023');
  });

  it('returns empty string for bad input', () => {
    expect(formatRelative('not a date', now)).toBe('');
    expect(formatRelative(null, now)).toBe('');
    expect(formatRelative(undefined, now)).toBe('');
  });
});

describe('formatFull', () => {
  it('formats as YYYY-MM-DD HH:MM', () => {
    expect(formatFull(at(2025, 2, 4, 14, 5))).toBe('2025-03-04 14:05');
    expect(formatFull('garbage')).toBe('');
  });
});
