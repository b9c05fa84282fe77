import { describe, expect, it } from 'vitest';
import { backupSummary, backupTime, describeCounts, type BackupCheck } from './backup';

const none = { lessons: 0, propositions: 0, practiceSets: 0, jobs: 0, settings: false };

describe('describeCounts', () => {
  it('names each kind present, singular or plural, joined in plain words', () => {
    expect(describeCounts({ ...none, lessons: 2, propositions: 10000, practiceSets: 1, jobs: 1 })).toBe(
      '2 lessons, 10,000 propositions, 1 practice set and 1 Workbench job',
    );
    expect(describeCounts({ ...none, lessons: 1 })).toBe('1 lesson');
    expect(describeCounts({ ...none, propositions: 3, jobs: 2 })).toBe('3 propositions and 2 Workbench jobs');
  });

  it('says nothing for an empty data dir', () => {
    expect(describeCounts({ ...none, settings: true })).toBe('nothing');
  });
});

describe('backupSummary', () => {
  it('gives the time in UTC and what the backup holds', () => {
    const check: BackupCheck = {
      token: 'bk_0000000000000000',
      backup: { createdAt: '2026-12-06T13:05:00.000Z', app: '0.1.0', version: 1, counts: { ...none, lessons: 3 }, skipped: [] },
      current: none,
      replaces: [],
      keeps: [],
    };
    expect(backupSummary(check)).toBe('This backup from 6 Dec 2026, 13:05 UTC holds 3 lessons.');
    expect(backupTime('not a time')).toBe('not a time');
  });
});
