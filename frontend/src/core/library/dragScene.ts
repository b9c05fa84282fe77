// A node dragged in a big graph (issue 17, "Bad input": the page stays interactive at 50k nodes).
// The crowded scene is drawn into a cached layer (SceneLayer in draw.ts); re-rendering that layer
// for every pointer move costs the whole graph per frame (50k nodes and their links: tens of ms).
// Instead, while a node is dragged the layer is rendered once without the node, its links and the
// hulls of the clusters holding it, and only those are drawn over the layer each frame. Their
// hulls are kept cheap too: the convex hull of a cluster's other members is computed once, so
// each frame hulls those corners plus the dragged node (O(corners), not O(members)).
// Pure: no canvas, no DOM.

import { polygonHull } from 'd3-polygon';
import type { Point } from './graphMath';
import type { RenderCluster, RenderLink, RenderNode } from './scene';

export interface DragScene {
  node: RenderNode;
  /** The links touching the node: drawn over the layer each frame. */
  links: readonly RenderLink[];
  /** Everything else: what the cached layer draws during the drag. */
  staticLinks: readonly RenderLink[];
  staticGroups: ReadonlyMap<string, readonly RenderNode[]>;
  staticImplications: readonly RenderNode[];
  /** The hull clusters holding the node (its session and its folder): drawn over the layer. */
  clusters: ReadonlySet<RenderCluster>;
  /** Per cluster in `clusters`: the convex hull corners of its other members (computed on first
   * use; `forgetCorners` clears them when those members move, e.g. a running simulation). */
  corners: Map<RenderCluster, Point[]>;
}

export interface SceneParts {
  links: readonly RenderLink[];
  groups: ReadonlyMap<string, readonly RenderNode[]>;
  implications: readonly RenderNode[];
  /** The hull clusters (folders and sessions). */
  clusters: readonly RenderCluster[];
}

/** Splits the scene into what stays still and what moves with `node`. O(links + nodes of its
 * group + clusters), once per drag. */
export function dragScene(node: RenderNode, scene: SceneParts): DragScene {
  const links: RenderLink[] = [];
  const staticLinks: RenderLink[] = [];
  for (const l of scene.links) (l.source === node || l.target === node ? links : staticLinks).push(l);
  let staticGroups = scene.groups;
  let staticImplications = scene.implications;
  if (node.kind === 'implication') staticImplications = scene.implications.filter((n) => n !== node);
  else {
    const group = scene.groups.get(node.color);
    if (group?.includes(node)) {
      const copy = new Map(scene.groups);
      copy.set(
        node.color,
        group.filter((n) => n !== node),
      );
      staticGroups = copy;
    }
  }
  const clusters = new Set<RenderCluster>();
  for (const c of scene.clusters) if (c.nodes.includes(node)) clusters.add(c);
  return { node, links, staticLinks, staticGroups, staticImplications, clusters, corners: new Map() };
}

/** The points whose padded hull is `cluster`'s hull with the node where it is now: the corners of
 * the other members' convex hull (cached) plus the node. The hull of these equals the hull of all
 * members (a point inside the others' hull never is a corner). */
export function dragHullPoints(drag: DragScene, cluster: RenderCluster): Point[] {
  let corners = drag.corners.get(cluster);
  if (!corners) {
    const others: Point[] = [];
    for (const n of cluster.nodes) if (n !== drag.node) others.push([n.x, n.y]);
    corners = others.length >= 3 ? (polygonHull(others) ?? others) : others;
    drag.corners.set(cluster, corners);
  }
  return [...corners, [drag.node.x, drag.node.y]];
}

/** The other members moved (a simulation tick): their corners are computed again on next use. */
export function forgetCorners(drag: DragScene): void {
  drag.corners.clear();
}
