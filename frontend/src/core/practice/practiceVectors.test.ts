import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chainsForSelection } from '../library/chainSelection';
import { chainCoverage, FALLBACK_LEVELS } from './practice';

// The shared vectors (tests/vectors/generate.py); the Python core (core/practice/chains.py)
// passes the same file.

interface PracticeVectors {
  chains: { id: string; premises: string[]; conclusion: string }[];
  selections: { name: string; selection: string[]; arguments: string[]; singletons: string[] }[];
  coverages: { name: string; chains: string[]; partition: string[][]; missing: string[]; duplicated: string[] }[];
}

const vectors = JSON.parse(readFileSync(new URL('../../../../tests/vectors/practice.json', import.meta.url), 'utf8')) as PracticeVectors;

describe('vectors: chainsForSelection', () => {
  for (const c of vectors.selections) {
    it(c.name, () => {
      const made = chainsForSelection(new Set(c.selection), vectors.chains);
      expect(made.chains.map((x) => x.id)).toEqual(c.arguments);
      expect(made.singletons).toEqual(c.singletons);
      expect(made.count).toBe(c.arguments.length + c.singletons.length);
    });
  }
});

describe('vectors: chainCoverage', () => {
  for (const c of vectors.coverages) {
    it(c.name, () => {
      const found = chainCoverage(c.chains, c.partition);
      expect([...found.missing].sort()).toEqual(c.missing);
      expect([...found.duplicated].sort()).toEqual(c.duplicated);
    });
  }
});

// The named levels are defined once, in server/core/practice/levels.py; tests/vectors/levels.json
// is its `GET /api/practice/levels` view, and the offline fallback must say exactly the same.
const levels = JSON.parse(readFileSync(new URL('../../../../tests/vectors/levels.json', import.meta.url), 'utf8')) as unknown;

describe('vectors: the named levels', () => {
  it('FALLBACK_LEVELS equals the server levels view', () => {
    expect(FALLBACK_LEVELS).toEqual(levels);
  });
});

