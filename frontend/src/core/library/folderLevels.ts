// Multi-scale clusters on the canvas (issue 17 item 2, docs/decisions/0022-folder-clusters.md):
// notes imported from folders read as folders first. At Fit and low zoom the canvas draws folder
// hulls and folder labels; a file's (note session's) hull and label inside a folder appear only
// once the file is large enough on screen. Clusters outside any folder (lessons, single files)
// are drawn at every zoom, as before. Pure: no canvas, no DOM.

import { compareLabels, LabelTier, type LabelCandidate } from './labelCull';

/** A file cluster inside a folder is drawn once its hull spans at least this many CSS px... */
export const FILE_MIN_PX = 160;
/** ...and at least this share of the viewport's shorter side (so a small vault at Fit shows its
 * folders, not its files). */
export const FILE_VIEW_SHARE = 0.3;

/** What a cluster on the canvas is: a folder, a file inside a folder, or a top-level cluster. */
export type ClusterLevel = 'folder' | 'file' | 'top';

/**
 * Whether a cluster's hull and label are drawn at zoom `k`.
 *
 * @param level the cluster's level.
 * @param extent the hull's larger side in world units.
 * @param k the zoom (CSS px per world unit).
 * @param viewport the canvas size in CSS px.
 */
export function clusterShown(level: ClusterLevel, extent: number, k: number, viewport: { width: number; height: number }): boolean {
  if (level !== 'file') return true;
  const px = extent * k;
  return Number.isFinite(px) && px >= Math.max(FILE_MIN_PX, FILE_VIEW_SHARE * Math.min(viewport.width, viewport.height));
}

export interface HullSpot {
  label: string;
  color: string;
  /** World position of the label's anchor. */
  x: number;
  y: number;
  level: ClusterLevel;
  /** The cluster's node count (bigger first within a level). */
  size: number;
  /** A folder's full path (its tooltip). */
  path?: string;
  /** A file's hull bottom (world y): its label's second place, under the hull. */
  below?: number;
}

const LEVEL_WEIGHT: Record<ClusterLevel, number> = { folder: 2e9, top: 1e9, file: 0 };

/** Cluster labels in the order the culler places them: folders first, then top-level clusters,
 * then files inside folders; within a level larger first, ties by label (`compareLabels`). */
export function orderHullSpots<T extends HullSpot>(spots: readonly T[]): T[] {
  const key = (s: T): LabelCandidate => ({ x0: 0, y0: 0, x1: 0, y1: 0, tier: LabelTier.cluster, weight: LEVEL_WEIGHT[s.level] + s.size, name: s.label });
  return [...spots].sort((a, b) => compareLabels(key(a), key(b)));
}

export interface FolderRow {
  key: string;
  label: string;
  path: string;
  parent: string | null;
  clusters: string[];
}

/** cluster key -> its folder row, for the clusters the folders list (a cluster named by two
 * folders keeps the first). */
export function folderOfCluster<F extends FolderRow>(folders: readonly F[]): Map<string, F> {
  const out = new Map<string, F>();
  for (const f of folders) for (const c of f.clusters) if (!out.has(c)) out.set(c, f);
  return out;
}
