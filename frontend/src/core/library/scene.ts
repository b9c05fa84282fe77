// The canvas's model of the graph: what the renderer simulates and draws (renderer.ts), what a
// drag splits into a cached scene (dragScene.ts) and what the pixel layer stamps (pointCloud.ts).
// Types only; a leaf, so the renderer and its helpers import it instead of each other.

import type { SimulationNodeDatum } from 'd3-force';
import type { NodeKind } from './graph';
import type { Point } from './graphMath';
import type { ClusterLevel } from './folderLevels';

export interface RenderNode extends SimulationNodeDatum {
  id: string;
  kind: NodeKind;
  /** Proposition name, or the chain line for an implication, as plain text (`plainMath`:
   * `$\lim_{h \to 0}$` reads "lim_(h → 0)"): the label until its typeset bitmap is ready. */
  name: string;
  /** The name (or chain line) as written, when it holds TeX: the label typesets it (issue 28,
   * item 6: components/library/graph/mathLabels.ts), `name` being its plain fallback. */
  tex?: string;
  cluster: string | null;
  color: string;
  /** Where the node rests (server position or where it was dropped); null: free. */
  ax: number | null;
  ay: number | null;
  degree: number;
  /** Cached label width in px (-1: not measured for the current text). */
  labelWidth: number;
  x: number;
  y: number;
}

export interface RenderLink {
  source: RenderNode;
  target: RenderNode;
}

export interface RenderCluster {
  key: string;
  label: string;
  color: string;
  nodes: RenderNode[];
  hull: Point[] | null;
  hullDirty: boolean;
  /** A folder, a file inside a folder, or a top-level cluster (folderLevels.ts); absent: top. */
  level?: ClusterLevel;
  /** A folder's full path (the tooltip over its label). */
  path?: string;
}
