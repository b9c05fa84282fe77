import { describe, expect, it } from 'vitest';
import { exportIds, graphExport, GRAPH_EXPORTS, selectionExportWords } from './graphExport';

describe('graph exports', () => {
  it('offers the vault first, then the deck, each at its route', () => {
    expect(GRAPH_EXPORTS.map((e) => e.kind)).toEqual(['vault', 'deck']);
    expect(graphExport('vault').path).toBe('/api/graph/export/vault.zip');
    expect(graphExport('deck').path).toBe('/api/graph/export/deck.apkg');
    expect(graphExport('deck').file.endsWith('.apkg')).toBe(true);
  });

  it('names a selection by its ids, sorted', () => {
    expect(exportIds(new Set(['n_b', 'n_a']))).toEqual(['n_a', 'n_b']);
  });

  it('says what a selection export holds', () => {
    expect(selectionExportWords(1, 0)).toBe('Export 1 proposition');
    expect(selectionExportWords(3, 1)).toBe('Export 3 propositions and the chain among them');
    expect(selectionExportWords(5, 2)).toBe('Export 5 propositions and the 2 chains among them');
  });
});
