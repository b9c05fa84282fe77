// The graph's exports (issue 31 item 2): what the home page's Export menu and the chain table's
// selection offer, and the words that say what a selection's export holds. Pure.

export type GraphExportKind = 'vault' | 'deck';

export interface GraphExport {
  kind: GraphExportKind;
  /** The menu item's words. */
  label: string;
  /** What the file is for, under the label. */
  hint: string;
  /** GET (the whole graph) or POST {ids} (a selection) to this path. */
  path: string;
  /** The downloaded file's name (the server names it the same). */
  file: string;
}

export const GRAPH_EXPORTS: readonly GraphExport[] = [
  {
    kind: 'vault',
    label: 'Obsidian vault (.zip)',
    hint: 'A note per proposition, its chains as links, a folder per lesson or notes folder',
    path: '/api/graph/export/vault.zip',
    file: 'Learning Harness graph.zip',
  },
  {
    kind: 'deck',
    label: 'Anki deck (.apkg)',
    hint: 'A card per proposition and per chain; importing a later export updates these cards',
    path: '/api/graph/export/deck.apkg',
    file: 'Learning Harness graph.apkg',
  },
];

export function graphExport(kind: GraphExportKind): GraphExport {
  const found = GRAPH_EXPORTS.find((e) => e.kind === kind);
  if (!found) throw new Error(`unknown export ${kind}`);
  return found;
}

/** The ids a selection's export names: its propositions, in a stable order (sorted). */
export function exportIds(selection: ReadonlySet<string>): string[] {
  return [...selection].sort();
}

/** "Export 3 propositions and the 2 chains among them" (`chains`: the chains whose every member is
 * selected, which is what the server adds to the selection's export). */
export function selectionExportWords(propositions: number, chains: number): string {
  const p = `${propositions} proposition${propositions === 1 ? '' : 's'}`;
  if (chains === 0) return `Export ${p}`;
  return `Export ${p} and the ${chains === 1 ? 'chain' : `${chains} chains`} among them`;
}
