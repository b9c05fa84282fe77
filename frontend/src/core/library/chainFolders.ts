// The chain table's folder level (issue 17 item 2): the session rows of notes imported from
// folders are grouped under their folder (nested folders indented under their parent folder);
// lessons and single files stay top-level rows after the folders. Pure.

import type { GraphFolder } from './graph';

export interface FolderGroup<C> {
  folder: GraphFolder;
  /** Nesting depth (0: a top-level folder). */
  depth: number;
  /** Its file rows, in the order given (sorted by the table). */
  clusters: C[];
  /** Propositions of its files, and every member (for selecting the whole folder). */
  props: number;
  members: string[];
}

/**
 * Group the table's session rows by folder.
 *
 * @param rows the session rows as the table shows them (sorted, filtered).
 * @param folders the view's folders (parents before children); absent or empty: no grouping.
 * @returns the folder groups that hold a shown row (in folder-path order, each parent before its
 *   children) and the rows in no folder, in their given order.
 */
export function groupByFolder<C extends { key: string; props: number; members: string[] }>(
  rows: readonly C[],
  folders: readonly GraphFolder[] | undefined,
): { groups: FolderGroup<C>[]; loose: C[] } {
  if (!folders?.length) return { groups: [], loose: [...rows] };
  const folderOf = new Map<string, string>();
  for (const f of folders) for (const c of f.clusters) if (!folderOf.has(c)) folderOf.set(c, f.key);
  const byFolder = new Map<string, C[]>();
  const loose: C[] = [];
  for (const row of rows) {
    const key = folderOf.get(row.key);
    if (key === undefined) loose.push(row);
    else {
      let list = byFolder.get(key);
      if (!list) byFolder.set(key, (list = []));
      list.push(row);
    }
  }
  const byKey = new Map(folders.map((f) => [f.key, f]));
  const depthOf = (f: GraphFolder): number => {
    let depth = 0;
    const seen = new Set<string>([f.key]);
    for (let p = f.parent; p && byKey.has(p) && !seen.has(p); p = byKey.get(p)!.parent) {
      seen.add(p);
      depth++;
    }
    return depth;
  };
  const ordered = [...folders].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const groups: FolderGroup<C>[] = [];
  for (const folder of ordered) {
    const clusters = byFolder.get(folder.key);
    if (!clusters?.length) continue;
    byFolder.delete(folder.key); // a key listed twice is grouped once
    groups.push({
      folder,
      depth: depthOf(folder),
      clusters,
      props: clusters.reduce((s, c) => s + c.props, 0),
      members: [...new Set(clusters.flatMap((c) => c.members))],
    });
  }
  return { groups, loose };
}
