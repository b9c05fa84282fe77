// The knowledge graph on a Canvas 2D: a d3-force simulation seeded from the server's resting
// positions, a d3-zoom camera (persisted per device), d3-quadtree hit testing, and ONE
// requestAnimationFrame loop that runs only while something changes (the dirty flag) or the
// simulation is still settling.

import { forceCollide, forceLink, forceManyBody, forceSimulation, forceX, forceY, type Simulation, } from 'd3-force';
import { quadtree, type Quadtree } from 'd3-quadtree';
import { select } from 'd3-selection';
import { zoom, zoomIdentity, type ZoomBehavior, type ZoomTransform } from 'd3-zoom';
import { DEFAULT_RENDER, changesOf, type GraphChanges, type GraphData, type GraphNode, type RenderSettings } from '../../../core/library/graph';
import { MAX_ZOOM, MIN_ZOOM, NO_CLUSTER_COLOR, chromeInsets, fitBounds, fitCamera, hashString, padBounds, parseCamera, type Bounds, type Camera } from '../../../core/library/graphMath';
import { plainMath } from '../../../core/math';
import { onThemeChange } from '../../machine_room/theme';
import { SceneLayer, drawScene, graphColorsFromCss, hullPad, setGraphColors, type DrawStats } from './draw';
import { MathLabels } from './mathLabels';
import { byLabelPriority, insertSorted, median, round2, round4, sameMap } from './renderHelpers';
import { dragScene, forgetCorners, type DragScene } from '../../../core/library/dragScene';
import { folderOfCluster } from '../../../core/library/folderLevels';
import type { RenderCluster, RenderLink, RenderNode } from '../../../core/library/scene';

export interface RendererEvents {
  /** A click on a node, or on the background (null). */
  onClick: (id: string | null) => void;
  /** Right-click on a node. */
  onContextMenu: (id: string) => void;
  /** A node was dragged and dropped at world (x, y). */
  onDrop: (id: string, x: number, y: number) => void;
}

export interface GraphStats {
  nodes: number;
  propositions: number;
  implications: number;
  links: number;
  clusters: number;
  /** Frames per second over the last rendered frames in a row (null: not enough frames yet). */
  fps: number | null;
  /** Median draw time of the last frames, ms. */
  drawMs: number | null;
  /** The simulation is idle. */
  settled: boolean;
  zoom: number;
  /** Cluster labels drawn in the last frame (folders' too), and how many node labels were drawn. */
  hullLabels: string[];
  /** The folder labels among them, and the file-inside-a-folder labels (issue 17 item 2). */
  folderLabels: string[];
  fileLabels: string[];
  /** Node labels drawn, and how many of them typeset (their math rendered: mathLabels.ts). */
  labels: number;
  mathLabels: number;
  /** Labels typeset since the page opened, and the main-thread ms that took. */
  typeset: { labels: number; ms: number };
  frames: number;
  /** Nodes on screen in the last frame, and how they were drawn (see draw.ts). */
  onScreen: number;
  mode: 'direct' | 'vector' | 'pixels';
  /** Every label drawn in the last frame as [x0, y0, x1, y1] in canvas CSS px (none overlap). */
  labelBoxes: [number, number, number, number][];
  /** The last new view taken: how long it took (ms), whether a delta was patched in place, and
   * how many views were taken (the same view again is not counted). */
  setData?: { ms: number; patched: boolean; calls: number };
}

/** Above this many nodes the simulation never runs on its own: server positions are the layout. */
export const LARGE_GRAPH = 3000;
const CAMERA_KEY = 'lh.graph.camera.v1';
const DRAG_THRESHOLD = 4;
/** Folder hulls' colour: neutral, so the files inside keep their own colours. */
const FOLDER_COLOR = '#5b6573';
/** Marks the page's chrome over the canvas (title, tools, hint), beside the canvas in its parent:
 * a fit keeps the graph out from under it, and no label is drawn under it (issue 29). */
export const CHROME_ATTR = 'data-graph-chrome';

export class GraphRenderer {
  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private readonly events: RendererEvents;
  private readonly zoomBehavior: ZoomBehavior<HTMLCanvasElement, unknown>;
  private readonly sim: Simulation<RenderNode, RenderLink>;
  private readonly resize: ResizeObserver;
  /** The chrome's boxes in canvas px (`CHROME_ATTR`), measured when it or the canvas resizes. */
  private chrome: Bounds[] = [];
  /** The camera is the automatic first fit, untouched by the learner since: fitted again once the
   * layout comes to rest (the simulation moves the nodes after the first fit). */
  private autoFit = false;
  private readonly sceneLayer = new SceneLayer(() => this.markDirty());
  private readonly mathLabels = new MathLabels(() => this.markDirty());
  private dataVersion = 0;
  /** The view last taken, and the cluster colours and labels it was drawn with. */
  private data: GraphData | null = null;
  private colors = new Map<string, string>();
  private clusterLabels = new Map<string, string>();
  /** The simulation does not hold the current nodes and links yet (a patched large graph). */
  private simStale = false;
  /** How long the last setData took, ms, and whether it patched (issue 17; the bench reads it). */
  private lastSetData = { ms: 0, patched: false, calls: 0 };

  private nodes: RenderNode[] = [];
  private byId = new Map<string, RenderNode>();
  private links: RenderLink[] = [];
  private groups = new Map<string, RenderNode[]>();
  private implications: RenderNode[] = [];
  private labelOrder: RenderNode[] = [];
  private clusters: RenderCluster[] = [];
  private clusterOf = new Map<string, RenderCluster>();
  /** Folder clusters, and file cluster key -> its folder. */
  private folderClusters: RenderCluster[] = [];
  private folderOf = new Map<string, RenderCluster>();
  /** What the hulls are drawn from: the folders, then the sessions. */
  private hullClusters: RenderCluster[] = [];
  private settings: RenderSettings = DEFAULT_RENDER;

  private transform: ZoomTransform = zoomIdentity;
  private width = 0;
  private height = 0;
  private dpr = 1;
  private cameraReady = false;
  private cameraTimer = 0;

  private simRunning = false;
  private dirty = true;
  private raf = 0;
  private posVersion = 0;
  /** Like posVersion, but a dragged node's moves leave it (the scene layer's key; see dragScene.ts). */
  private scenePos = 0;
  private quad: Quadtree<RenderNode> | null = null;
  private quadVersion = -1;

  private hoverId: string | null = null;
  private selectedId: string | null = null;
  private highlight = { nodes: new Set<string>(), links: [] as RenderLink[] };
  private drag: { node: RenderNode; pointerId: number; startX: number; startY: number; dx: number; dy: number; moved: boolean } | null = null;
  /** The scene split around the dragged node, from its first move to the drop. */
  private dragScene: DragScene | null = null;
  private suppressClick = false;
  private dropped = new Set<RenderNode>();

  private frameIntervals: number[] = [];
  private drawTimes: number[] = [];
  private lastFrameAt = 0;
  private frames = 0;
  private lastDraw: DrawStats = { hullLabels: [], folderLabels: [], fileLabels: [], folderBoxes: [], labels: 0, onScreen: 0, mode: 'direct', labelBoxes: [], mathLabels: 0 };
  private destroyed = false;
  private readonly stopThemeFollow: () => void;

  constructor(canvas: HTMLCanvasElement, events: RendererEvents) {
    this.canvas = canvas;
    const ctx = canvas.getContext('2d', { alpha: false });
    if (!ctx) throw new Error('Canvas 2D is not available');
    this.ctx = ctx;
    this.events = events;
    // The canvas colours follow the theme (light, dark, or the system's).
    const readColors = () => setGraphColors(graphColorsFromCss(getComputedStyle(document.documentElement)));
    readColors();
    this.stopThemeFollow = onThemeChange(() => {
      readColors();
      this.markDirty();
    });

    this.sim = forceSimulation<RenderNode, RenderLink>([])
      .stop()
      .alphaDecay(0.045)
      .alphaMin(0.005)
      .velocityDecay(0.45)
      .force('link', forceLink<RenderNode, RenderLink>([]).distance(34).strength(0.12))
      .force('charge', forceManyBody<RenderNode>().strength(-28).distanceMax(220).theta(0.9))
      .force('collide', forceCollide<RenderNode>((d) => this.baseRadius(d) + 3).strength(0.6))
      .force(
        'x',
        forceX<RenderNode>((d) => d.ax ?? 0).strength((d) => (d.ax === null ? 0.01 : 0.35)),
      )
      .force(
        'y',
        forceY<RenderNode>((d) => d.ay ?? 0).strength((d) => (d.ay === null ? 0.01 : 0.35)),
      );

    this.zoomBehavior = zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([MIN_ZOOM, MAX_ZOOM])
      .filter((event: Event) => {
        if (event.type === 'wheel') return true;
        const e = event as MouseEvent;
        if (e.button || e.ctrlKey) return false;
        // A press on a node drags the node, not the camera.
        if (event.type === 'mousedown' && this.hitClient(e.clientX, e.clientY)) return false;
        return true;
      })
      .on('zoom', (event: { transform: ZoomTransform; sourceEvent?: unknown }) => {
        if (event.sourceEvent) this.autoFit = false; // the learner's wheel or drag, not a fit
        this.transform = event.transform;
        this.saveCameraSoon();
        this.markDirty();
      });
    select(canvas).call(this.zoomBehavior).on('dblclick.zoom', null);

    canvas.addEventListener('pointerdown', this.onPointerDown);
    canvas.addEventListener('pointermove', this.onPointerMove);
    canvas.addEventListener('pointerup', this.onPointerUp);
    canvas.addEventListener('pointercancel', this.onPointerUp);
    canvas.addEventListener('pointerleave', this.onPointerLeave);
    canvas.addEventListener('click', this.onClick);
    canvas.addEventListener('contextmenu', this.onContextMenu);

    window.addEventListener('pagehide', this.onPageHide);

    this.resize = new ResizeObserver(() => {
      this.measureChrome();
      this.measure();
      this.markDirty();
    });
    this.resize.observe(canvas);
    for (const el of this.chromeElements()) this.resize.observe(el);
    this.measureChrome();
    this.measure();
  }

  // -------------------------------------------------------------------------
  // Data and settings

  /**
   * Take a new view of the graph; nodes that stay keep where they are now. The same view again
   * does nothing; a view patched from the one held (`changesOf`, a delta after a merge) is
   * applied to the model in place (issue 17): only its nodes, their links, clusters and hulls.
   */
  setData(data: GraphData, colors: Map<string, string>, labels: Map<string, string>): void {
    const t0 = performance.now();
    if (data === this.data && sameMap(colors, this.colors) && sameMap(labels, this.clusterLabels)) return;
    const changes = changesOf(data);
    const patched = !!changes && !!this.data && changes.base === this.data && !this.drag;
    if (patched) this.patch(data, changes!, colors, labels);
    else this.rebuild(data, colors, labels);
    this.data = data;
    this.colors = colors;
    this.clusterLabels = labels;
    this.lastSetData = { ms: performance.now() - t0, patched, calls: this.lastSetData.calls + 1 };
  }

  /** One view node into the model: the held render node updated, or a new one (unplaced when the
   * server has no position for it). */
  private take(g: GraphNode, previous: Map<string, RenderNode>, colors: Map<string, string>, unplaced: RenderNode[]): RenderNode {
    let node = previous.get(g.id);
    const hasPos = g.x !== undefined && g.y !== undefined;
    const raw = g.kind === 'implication' ? g.statement : g.name;
    const name = plainMath(raw);
    if (node) {
      if (node.name !== name) node.labelWidth = -1;
      node.name = name;
      node.tex = name === raw ? undefined : raw;
      node.kind = g.kind;
      node.cluster = g.cluster;
      // The server moved it (another tab dragged it): follow.
      if (hasPos && (node.ax !== g.x || node.ay !== g.y) && this.drag?.node !== node) {
        node.ax = g.x!;
        node.ay = g.y!;
        node.x = g.x!;
        node.y = g.y!;
        node.vx = 0;
        node.vy = 0;
      }
    } else {
      node = {
        id: g.id,
        kind: g.kind,
        name,
        tex: name === raw ? undefined : raw,
        cluster: g.cluster,
        color: NO_CLUSTER_COLOR,
        ax: hasPos ? g.x! : null,
        ay: hasPos ? g.y! : null,
        degree: 0,
        labelWidth: -1,
        x: hasPos ? g.x! : 0,
        y: hasPos ? g.y! : 0,
      };
      if (!hasPos) unplaced.push(node);
    }
    node.color = g.cluster ? (colors.get(g.cluster) ?? NO_CLUSTER_COLOR) : NO_CLUSTER_COLOR;
    return node;
  }

  /**
   * Apply a delta to the model: the changed nodes are updated or created, removed ones drop,
   * the links of relinked nodes are made again, label order and hull work are limited to the
   * nodes and clusters touched; nothing else moves and the camera stays.
   */
  private patch(data: GraphData, changes: GraphChanges, colors: Map<string, string>, labels: Map<string, string>): void {
    const byId = this.byId;
    const touched = new Set<RenderNode>();
    const touchedClusters = new Set<string>();
    const gone = new Set<RenderNode>();
    for (const id of changes.removed) {
      const node = byId.get(id);
      if (!node) continue;
      byId.delete(id);
      gone.add(node);
      if (node.cluster) touchedClusters.add(node.cluster);
    }
    // links drop only around ids the model held (a new chain has none yet)
    let dropsLinks = gone.size > 0;
    for (const id of changes.relinked) if (!dropsLinks && byId.has(id)) dropsLinks = true;
    const unplaced: RenderNode[] = [];
    const added: RenderNode[] = [];
    for (const g of changes.upserted) {
      const known = byId.get(g.id);
      const was = known ? { cluster: known.cluster, x: known.x, y: known.y, color: known.color } : null;
      const node = this.take(g, byId, colors, unplaced);
      if (!known) {
        byId.set(node.id, node);
        added.push(node);
      }
      touched.add(node);
      if (!was || was.cluster !== node.cluster || was.x !== node.x || was.y !== node.y || was.color !== node.color) {
        if (was?.cluster) touchedClusters.add(was.cluster);
        if (node.cluster) touchedClusters.add(node.cluster);
      }
    }
    // the model's own arrays change in place (the simulation is re-fed before it runs again)
    const nodes = gone.size ? this.nodes.filter((n) => !gone.has(n)) : this.nodes;
    for (const n of added) nodes.push(n);
    // links: those touching a relinked id go, the delta's join
    let links = this.links;
    const linksBefore = links.length;
    if (changes.relinked.size || changes.links.length) {
      if (dropsLinks) {
        links = [];
        for (const l of this.links) {
          if (changes.relinked.has(l.source.id) || changes.relinked.has(l.target.id)) {
            l.source.degree--;
            l.target.degree--;
            touched.add(l.source).add(l.target);
          } else links.push(l);
        }
      }
      for (const l of changes.links) {
        const source = byId.get(l.source);
        const target = byId.get(l.target);
        if (!source || !target) continue;
        source.degree++;
        target.degree++;
        touched.add(source).add(target);
        links.push({ source, target });
      }
    }
    this.placeNew(unplaced, links, nodes);
    // colours: a new session can shift the palette of others (assignClusterColors)
    let recolor = false;
    for (const c of this.clusters) if ((colors.get(c.key) ?? NO_CLUSTER_COLOR) !== c.color) recolor = true;
    if (recolor) for (const n of nodes) n.color = n.cluster ? (colors.get(n.cluster) ?? NO_CLUSTER_COLOR) : NO_CLUSTER_COLOR;
    const structure = gone.size > 0 || added.length > 0 || links !== this.links || links.length !== linksBefore;
    this.nodes = nodes;
    this.links = links;
    if (gone.size || added.length || recolor || touchedClusters.size) this.regroup();
    // label order: the touched propositions leave it and go back in at their place
    const order = this.labelOrder.filter((n) => !touched.has(n) && !gone.has(n));
    for (const n of touched) if (n.kind === 'proposition' && !gone.has(n) && byId.get(n.id) === n) insertSorted(order, n, byLabelPriority);
    this.labelOrder = order;
    if (data.folders !== changes.base.folders || this.clusterLabelsChanged(labels)) {
      this.buildClusters(data, colors, labels);
    } else {
      this.patchClusters(touchedClusters, gone, colors, labels);
    }
    this.afterData();
    // the simulation takes the new nodes and links when it next runs (reheat): feeding it
    // re-initialises every force over all nodes
    if (structure) this.simStale = true;
    this.posVersion++;
    this.scenePos++;
    if (this.dragScene) forgetCorners(this.dragScene);
    if (unplaced.length && this.nodes.length <= LARGE_GRAPH * 4) this.reheat(0.4);
    if (!this.cameraReady) this.initCamera();
    this.markDirty();
  }

  /** A cluster's label differs from what the model draws (a lesson renamed). */
  private clusterLabelsChanged(labels: Map<string, string>): boolean {
    for (const [key, label] of labels) if (label !== this.clusterLabels.get(key)) return true;
    return labels.size !== this.clusterLabels.size;
  }

  /** The touched sessions' members again (their hulls to compute); new sessions join, empty ones go. */
  private patchClusters(keys: Set<string>, gone: Set<RenderNode>, colors: Map<string, string>, labels: Map<string, string>): void {
    for (const c of this.clusters) c.color = colors.get(c.key) ?? NO_CLUSTER_COLOR;
    if (!keys.size) return;
    const members = new Map<string, RenderNode[]>();
    for (const key of keys) members.set(key, []);
    // the touched sessions' members, in node order (one pass: a mover left one and joined another)
    for (const n of this.nodes) if (n.kind === 'proposition' && n.cluster && members.has(n.cluster)) members.get(n.cluster)!.push(n);
    const inFolder = folderOfCluster(this.data?.folders ?? []);
    let listChanged = false;
    for (const [key, list] of members) {
      const c = this.clusterOf.get(key);
      if (c) {
        c.nodes = list;
        c.hullDirty = true;
        if (!list.length) listChanged = true;
      } else if (list.length) {
        const made: RenderCluster = {
          key,
          label: plainMath(labels.get(key) ?? key),
          color: colors.get(key) ?? NO_CLUSTER_COLOR,
          nodes: list,
          hull: null,
          hullDirty: true,
          level: inFolder.has(key) ? 'file' : 'top',
        };
        this.clusters.push(made);
        this.clusterOf.set(key, made);
        listChanged = true;
      }
      const folder = this.folderOf.get(key);
      if (folder) {
        folder.nodes = folder.nodes.filter((n) => !gone.has(n) && n.cluster !== key).concat(list);
        folder.hullDirty = true;
      }
    }
    if (listChanged) {
      this.clusters = this.clusters.filter((c) => c.nodes.length);
      this.clusterOf = new Map(this.clusters.map((c) => [c.key, c]));
      this.hullClusters = this.folderClusters.length ? [...this.folderClusters, ...this.clusters] : this.clusters;
    }
  }

  /** Draw lists by colour, and the implications. */
  private regroup(): void {
    this.groups = new Map();
    this.implications = [];
    for (const n of this.nodes) {
      if (n.kind === 'implication') this.implications.push(n);
      else {
        let group = this.groups.get(n.color);
        if (!group) this.groups.set(n.color, (group = []));
        group.push(n);
      }
    }
  }

  /** The simulation holds the current nodes and links (only needed when it runs). */
  private syncSim(): void {
    if (!this.simStale) return;
    this.simStale = false;
    this.sim.nodes(this.nodes);
    (this.sim.force('link') as ReturnType<typeof forceLink<RenderNode, RenderLink>>).links(this.links);
  }

  /** Selection, hover and the drag split follow a new model. */
  private afterData(): void {
    if (this.dragScene) this.dragScene = this.splitForDrag(this.dragScene.node);
    if (this.hoverId && !this.byId.has(this.hoverId)) this.hoverId = null;
    if (this.selectedId && !this.byId.has(this.selectedId)) this.selectedId = null;
    this.computeHighlight();
    this.dataVersion++;
  }

  /** The whole model from the view. */
  private rebuild(data: GraphData, colors: Map<string, string>, labels: Map<string, string>): void {
    const previous = this.byId;
    const nodes: RenderNode[] = [];
    const byId = new Map<string, RenderNode>();
    const unplaced: RenderNode[] = [];
    for (const g of data.nodes) {
      const node = this.take(g, previous, colors, unplaced);
      node.degree = 0;
      nodes.push(node);
      byId.set(node.id, node);
    }
    const links: RenderLink[] = [];
    for (const l of data.links) {
      const source = byId.get(l.source);
      const target = byId.get(l.target);
      if (!source || !target) continue;
      source.degree++;
      target.degree++;
      links.push({ source, target });
    }
    this.placeNew(unplaced, links, nodes);

    this.nodes = nodes;
    this.byId = byId;
    this.links = links;
    this.regroup();
    this.labelOrder = nodes.filter((n) => n.kind === 'proposition').sort(byLabelPriority);
    this.buildClusters(data, colors, labels);
    this.afterData();
    this.simStale = false;
    this.sim.nodes(nodes);
    (this.sim.force('link') as ReturnType<typeof forceLink<RenderNode, RenderLink>>).links(links);
    this.positionsChanged();
    // Nodes with a server position start exactly there (the server settled them); the
    // simulation only runs to place new nodes, and while a node is dragged.
    if (unplaced.length && nodes.length <= LARGE_GRAPH * 4) this.reheat(unplaced.length === nodes.length ? 1 : 0.4);
    if (!this.cameraReady) this.initCamera();
    this.markDirty();
  }

  /** Sessions and folders (with their hulls to compute) from the model's nodes. */
  private buildClusters(data: GraphData, colors: Map<string, string>, labels: Map<string, string>): void {
    const clusterNodes = new Map<string, RenderNode[]>();
    for (const n of this.nodes) {
      if (n.kind !== 'proposition' || !n.cluster) continue;
      let list = clusterNodes.get(n.cluster);
      if (!list) clusterNodes.set(n.cluster, (list = []));
      list.push(n);
    }
    const inFolder = folderOfCluster(data.folders ?? []);
    this.clusters = [...clusterNodes].map(([key, members]) => ({
      key,
      label: plainMath(labels.get(key) ?? key), // a canvas label cannot typeset: no raw `$`
      color: colors.get(key) ?? NO_CLUSTER_COLOR,
      nodes: members,
      hull: null,
      hullDirty: true,
      level: inFolder.has(key) ? 'file' : 'top',
    }));
    this.clusterOf = new Map(this.clusters.map((c) => [c.key, c]));
    // Folders (issue 17 item 2): one hull around the nodes of its files, drawn first.
    this.folderOf = new Map();
    const folders: RenderCluster[] = [];
    for (const f of data.folders ?? []) {
      const members = f.clusters.flatMap((c) => this.clusterOf.get(c)?.nodes ?? []);
      if (!members.length) continue;
      const folder: RenderCluster = { key: f.key, label: plainMath(f.label), color: FOLDER_COLOR, nodes: members, hull: null, hullDirty: true, level: 'folder', path: f.path };
      folders.push(folder);
      for (const c of f.clusters) if (!this.folderOf.has(c)) this.folderOf.set(c, folder);
    }
    this.folderClusters = folders;
    this.hullClusters = folders.length ? [...folders, ...this.clusters] : this.clusters;
  }

  /** New nodes without a server position start next to their placed neighbours (or the middle). */
  private placeNew(unplaced: RenderNode[], links: RenderLink[], all: RenderNode[]): void {
    if (!unplaced.length) return;
    const free = new Set(unplaced);
    const b = fitBounds(all.filter((n) => !free.has(n)));
    const cx = b ? (b.x0 + b.x1) / 2 : 0;
    const cy = b ? (b.y0 + b.y1) / 2 : 0;
    const anchors = new Map<RenderNode, RenderNode[]>();
    const addAnchor = (node: RenderNode, other: RenderNode) => {
      if (!free.has(node) || free.has(other)) return;
      let list = anchors.get(node);
      if (!list) anchors.set(node, (list = []));
      list.push(other);
    };
    for (const l of links) {
      addAnchor(l.source, l.target);
      addAnchor(l.target, l.source);
    }
    for (const node of unplaced) {
      const near = anchors.get(node) ?? [];
      const h = hashString(node.id);
      const angle = ((h & 0xffff) / 0xffff) * Math.PI * 2;
      const r = 20 + ((h >>> 16) % 40);
      const mx = near.length ? near.reduce((s, o) => s + o.x, 0) / near.length : cx;
      const my = near.length ? near.reduce((s, o) => s + o.y, 0) / near.length : cy;
      node.x = mx + Math.cos(angle) * r;
      node.y = my + Math.sin(angle) * r;
    }
  }

  setSettings(settings: RenderSettings): void {
    const sizeChanged = settings.nodeSize !== this.settings.nodeSize;
    this.settings = settings;
    if (sizeChanged) {
      (this.sim.force('collide') as ReturnType<typeof forceCollide<RenderNode>>).radius((d) => this.baseRadius(d) + 3);
      this.clusters.forEach((c) => (c.hullDirty = true));
      this.folderClusters.forEach((c) => (c.hullDirty = true));
    }
    this.markDirty();
  }

  setSelected(id: string | null): void {
    if (id === this.selectedId) return;
    this.selectedId = id;
    this.computeHighlight();
    this.markDirty();
  }

  /** The selected node's chain(s): the links around it and around its implications. */
  private computeHighlight(): void {
    const nodes = new Set<string>();
    const links: RenderLink[] = [];
    const sel = this.selectedId ? this.byId.get(this.selectedId) : undefined;
    if (sel) {
      const hubs = new Set<RenderNode>();
      if (sel.kind === 'implication') hubs.add(sel);
      for (const l of this.links) {
        if (l.source === sel && l.target.kind === 'implication') hubs.add(l.target);
        if (l.target === sel && l.source.kind === 'implication') hubs.add(l.source);
      }
      for (const l of this.links) {
        if (hubs.has(l.source) || hubs.has(l.target) || l.source === sel || l.target === sel) {
          links.push(l);
          nodes.add(l.source.id);
          nodes.add(l.target.id);
        }
      }
      nodes.add(sel.id);
    }
    this.highlight = { nodes, links };
  }

  // -------------------------------------------------------------------------
  // Camera

  private measure(): void {
    const rect = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(0, Math.round(rect.width));
    const h = Math.max(0, Math.round(rect.height));
    if (w === this.width && h === this.height && dpr === this.dpr) return;
    this.width = w;
    this.height = h;
    this.dpr = dpr;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    if (!this.cameraReady) this.initCamera();
    this.markDirty();
  }

  /** The stored camera of this device, else a fit of the whole graph (once there is a size and nodes). */
  private initCamera(): void {
    if (this.cameraReady || !this.width || !this.height || !this.nodes.length) return;
    this.cameraReady = true;
    let stored: Camera | null = null;
    try {
      stored = parseCamera(window.localStorage.getItem(CAMERA_KEY));
    } catch {
      stored = null;
    }
    if (stored) this.setCamera(stored);
    else {
      this.fit();
      this.autoFit = true;
    }
  }

  private chromeElements(): Element[] {
    return [...(this.canvas.parentElement?.querySelectorAll(`[${CHROME_ATTR}]`) ?? [])];
  }

  /** The chrome's boxes now, in canvas px (hidden or empty elements left out). */
  private measureChrome(): void {
    const frame = this.canvas.getBoundingClientRect();
    const boxes: Bounds[] = [];
    for (const el of this.chromeElements()) {
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height) continue;
      boxes.push({ x0: r.left - frame.left, y0: r.top - frame.top, x1: r.right - frame.left, y1: r.bottom - frame.top });
    }
    this.chrome = boxes;
  }

  private setCamera(c: Camera): void {
    this.zoomBehavior.transform(select(this.canvas), zoomIdentity.translate(c.x, c.y).scale(c.k));
  }

  /**
   * Show the whole graph (but for nodes far away from all the rest: `fitBounds`) with the hulls'
   * padding, in the canvas less its edges and the chrome over it (`chromeInsets`). Labels are not
   * fitted: they keep their pixel size whatever the zoom, and are placed where they fit whole
   * (left of a node by the right edge) or not drawn (issue 29: fitting them shrank the graph below
   * the size at which cluster labels show).
   */
  fit(): void {
    this.measureChrome();
    const bounds = padBounds(fitBounds(this.nodes), hullPad(this.settings.nodeSize));
    this.setCamera(fitCamera(bounds, this.width, this.height, chromeInsets(this.width, this.height, this.chrome)));
  }

  /** Centre the camera on a node, keeping the zoom (at least `minK`). */
  focus(id: string, minK = 0): void {
    const n = this.byId.get(id);
    if (!n) return;
    const k = Math.max(this.transform.k, minK);
    this.setCamera({ x: this.width / 2 - n.x * k, y: this.height / 2 - n.y * k, k });
  }

  /** Pan by screen pixels (a test and keyboard hook; goes through d3-zoom like a mouse pan). */
  panBy(dx: number, dy: number): void {
    this.zoomBehavior.translateBy(select(this.canvas), dx / this.transform.k, dy / this.transform.k);
  }

  private saveCameraSoon(): void {
    window.clearTimeout(this.cameraTimer);
    this.cameraTimer = window.setTimeout(() => this.saveCamera(), 250);
  }

  private onPageHide = (): void => this.saveCamera();

  private saveCamera(): void {
    window.clearTimeout(this.cameraTimer);
    if (!this.cameraReady) return;
    const { x, y, k } = this.transform;
    try {
      window.localStorage.setItem(CAMERA_KEY, JSON.stringify({ x: round2(x), y: round2(y), k: round4(k) }));
    } catch {
      // storage full or disabled: the camera is just not remembered
    }
  }

  // -------------------------------------------------------------------------
  // The frame loop

  private markDirty(): void {
    this.dirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.raf && !this.destroyed) this.raf = requestAnimationFrame(this.frame);
  }

  private reheat(alpha: number, target = 0): void {
    this.syncSim();
    this.sim.alpha(Math.max(this.sim.alpha(), alpha)).alphaTarget(target);
    this.simRunning = true;
    this.schedule();
  }

  private frame = (now: number): void => {
    this.raf = 0;
    if (this.simRunning) {
      this.sim.tick();
      this.positionsChanged();
      this.dirty = true;
      if (this.sim.alpha() < this.sim.alphaMin() && this.sim.alphaTarget() === 0) {
        this.simRunning = false;
        this.releaseDropped();
        if (this.autoFit && !this.drag) {
          this.autoFit = false;
          this.fit();
        }
      }
    }
    if (this.dirty && this.width && this.height) {
      this.dirty = false;
      const t0 = performance.now();
      this.draw();
      this.drawTimes.push(performance.now() - t0);
      if (this.drawTimes.length > 120) this.drawTimes.shift();
      if (this.lastFrameAt && now - this.lastFrameAt < 250) {
        this.frameIntervals.push(now - this.lastFrameAt);
        if (this.frameIntervals.length > 120) this.frameIntervals.shift();
      }
      this.lastFrameAt = now;
      this.frames++;
    }
    if (this.simRunning || this.dirty) this.schedule();
  };

  /** Nodes pinned where they were dropped go back to being held by their anchor once all is still. */
  private releaseDropped(): void {
    for (const n of this.dropped) {
      if (this.drag?.node === n) continue;
      n.fx = null;
      n.fy = null;
    }
    this.dropped.clear();
  }

  /** One node moved (dragged, or dropped): hit testing and its clusters' hulls follow. */
  private nodeMoved(n: RenderNode): void {
    this.posVersion++;
    const cluster = n.cluster ? this.clusterOf.get(n.cluster) : undefined;
    if (cluster) cluster.hullDirty = true;
    const folder = n.cluster ? this.folderOf.get(n.cluster) : undefined;
    if (folder) folder.hullDirty = true;
  }

  private positionsChanged(): void {
    this.posVersion++;
    this.scenePos++;
    if (this.dragScene) forgetCorners(this.dragScene);
    for (const c of this.clusters) c.hullDirty = true;
    for (const c of this.folderClusters) c.hullDirty = true;
  }

  private draw(): void {
    this.lastDraw = drawScene(this.ctx, {
      width: this.width,
      height: this.height,
      dpr: this.dpr,
      transform: this.transform,
      settings: this.settings,
      links: this.links,
      groups: this.groups,
      implications: this.implications,
      labelOrder: this.labelOrder,
      clusters: this.hullClusters,
      hoverId: this.hoverId,
      selectedId: this.selectedId,
      highlight: this.highlight,
      byId: this.byId,
      radius: (n) => this.radius(n),
      sceneLayer: this.sceneLayer,
      sceneVersion: `${this.dataVersion}:${this.scenePos}:${this.dragScene?.node.id ?? ''}`,
      drag: this.dragScene,
      mathLabels: this.mathLabels,
      reserved: this.chrome,
    });
  }

  private splitForDrag(node: RenderNode): DragScene {
    return dragScene(node, { links: this.links, groups: this.groups, implications: this.implications, clusters: this.hullClusters });
  }

  /** A node's radius in world units at zoom 1 (what the simulation keeps apart). */
  private baseRadius(n: RenderNode): number {
    return n.kind === 'implication' ? this.settings.nodeSize * 0.8 : this.settings.nodeSize;
  }

  /**
   * Below zoom 1 nodes shrink with the square root of the zoom, not the zoom itself, so a
   * zoomed-out graph stays legible: the drawn (and clickable) radius in world units.
   */
  radius(n: RenderNode): number {
    const k = this.transform.k;
    return this.baseRadius(n) * (k < 1 ? 1 / Math.sqrt(k) : 1);
  }

  // -------------------------------------------------------------------------
  // Hit testing and pointer input

  private ensureQuad(): Quadtree<RenderNode> {
    if (!this.quad || this.quadVersion !== this.posVersion) {
      this.quad = quadtree<RenderNode>()
        .x((d) => d.x)
        .y((d) => d.y)
        .addAll(this.nodes);
      this.quadVersion = this.posVersion;
    }
    return this.quad;
  }

  /** The node under a viewport point (client coordinates), if any. */
  hitClient(clientX: number, clientY: number): RenderNode | null {
    if (!this.nodes.length) return null;
    const rect = this.canvas.getBoundingClientRect();
    const [wx, wy] = this.transform.invert([clientX - rect.left, clientY - rect.top]);
    const slop = 4 / this.transform.k;
    const k = this.transform.k;
    const reach = this.settings.nodeSize * (k < 1 ? 1 / Math.sqrt(k) : 1) + slop;
    const found = this.ensureQuad().find(wx, wy, reach);
    if (!found) return null;
    const d = Math.hypot(found.x - wx, found.y - wy);
    return d <= this.radius(found) + slop ? found : null;
  }

  private onPointerDown = (e: PointerEvent): void => {
    if (e.button !== 0) return;
    const hit = this.hitClient(e.clientX, e.clientY);
    if (!hit) return;
    const rect = this.canvas.getBoundingClientRect();
    const [wx, wy] = this.transform.invert([e.clientX - rect.left, e.clientY - rect.top]);
    this.drag = { node: hit, pointerId: e.pointerId, startX: e.clientX, startY: e.clientY, dx: hit.x - wx, dy: hit.y - wy, moved: false };
    this.autoFit = false; // the learner took hold of the graph: their view stays
    try {
      this.canvas.setPointerCapture(e.pointerId);
    } catch {
      // a synthetic pointer cannot be captured: moves still arrive while over the canvas
    }
  };

  private onPointerMove = (e: PointerEvent): void => {
    const drag = this.drag;
    if (drag && e.pointerId === drag.pointerId) {
      if (!drag.moved && Math.hypot(e.clientX - drag.startX, e.clientY - drag.startY) < DRAG_THRESHOLD) return;
      if (!drag.moved) this.dragScene = this.splitForDrag(drag.node);
      drag.moved = true;
      const rect = this.canvas.getBoundingClientRect();
      const [wx, wy] = this.transform.invert([e.clientX - rect.left, e.clientY - rect.top]);
      const n = drag.node;
      n.x = n.fx = wx + drag.dx;
      n.y = n.fy = wy + drag.dy;
      this.canvas.style.cursor = 'grabbing';
      this.nodeMoved(n);
      if (this.nodes.length <= LARGE_GRAPH) this.reheat(0.08, 0.04);
      this.markDirty();
      return;
    }
    if (e.buttons) return; // panning: no hover work
    const hit = this.hitClient(e.clientX, e.clientY);
    const id = hit?.id ?? null;
    // A folder label shows its full path as the canvas's tooltip.
    const rect = this.canvas.getBoundingClientRect();
    const px = e.clientX - rect.left;
    const py = e.clientY - rect.top;
    const over = hit ? undefined : this.lastDraw.folderBoxes.find((f) => px >= f.x0 && px <= f.x1 && py >= f.y0 && py <= f.y1);
    const title = over ? over.path : '';
    if (this.canvas.title !== title) this.canvas.title = title;
    if (id !== this.hoverId) {
      this.hoverId = id;
      this.canvas.style.cursor = hit ? 'pointer' : '';
      this.markDirty();
    }
  };

  private onPointerUp = (e: PointerEvent): void => {
    const drag = this.drag;
    if (!drag || e.pointerId !== drag.pointerId) return;
    this.drag = null;
    this.dragScene = null;
    try {
      this.canvas.releasePointerCapture(e.pointerId);
    } catch {
      // not captured
    }
    if (!drag.moved) return;
    const n = drag.node;
    // It stays exactly where it was dropped (pinned while the neighbours settle, then anchored there).
    n.x = n.ax = n.fx = round2(n.x);
    n.y = n.ay = n.fy = round2(n.y);
    this.dropped.add(n);
    n.vx = 0;
    n.vy = 0;
    this.sim.alphaTarget(0);
    if (!this.simRunning) this.releaseDropped();
    this.canvas.style.cursor = 'pointer';
    this.suppressClick = true;
    window.setTimeout(() => (this.suppressClick = false), 0);
    // Only this node moved (a running simulation calls positionsChanged on each tick): the
    // scene is drawn again, but only its clusters' hulls are recomputed.
    this.nodeMoved(n);
    this.scenePos++;
    this.markDirty();
    this.events.onDrop(n.id, n.x, n.y);
  };

  private onPointerLeave = (): void => {
    if (this.hoverId && !this.drag) {
      this.hoverId = null;
      this.canvas.style.cursor = '';
      this.markDirty();
    }
  };

  private onClick = (e: MouseEvent): void => {
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    this.events.onClick(this.hitClient(e.clientX, e.clientY)?.id ?? null);
  };

  private onContextMenu = (e: MouseEvent): void => {
    const hit = this.hitClient(e.clientX, e.clientY);
    if (!hit) return;
    e.preventDefault();
    this.events.onContextMenu(hit.id);
  };

  // -------------------------------------------------------------------------
  // Test hooks

  /** A node's position in viewport (client) coordinates, or null for an unknown id. */
  nodeScreenPosition(id: string): { x: number; y: number } | null {
    const n = this.byId.get(id);
    if (!n) return null;
    const rect = this.canvas.getBoundingClientRect();
    const [sx, sy] = this.transform.apply([n.x, n.y]);
    return { x: round2(rect.left + sx), y: round2(rect.top + sy) };
  }

  stats(): GraphStats {
    let propositions = 0;
    for (const n of this.nodes) if (n.kind === 'proposition') propositions++;
    const fpsMs = median(this.frameIntervals.slice(-60));
    const draw = median(this.drawTimes.slice(-60));
    return {
      nodes: this.nodes.length,
      propositions,
      implications: this.nodes.length - propositions,
      links: this.links.length,
      clusters: this.clusters.length,
      fps: fpsMs ? Math.round((1000 / fpsMs) * 10) / 10 : null,
      drawMs: draw === null ? null : Math.round(draw * 100) / 100,
      settled: !this.simRunning && !this.drag,
      zoom: this.transform.k,
      hullLabels: [...this.lastDraw.hullLabels],
      folderLabels: [...this.lastDraw.folderLabels],
      fileLabels: [...this.lastDraw.fileLabels],
      labels: this.lastDraw.labels,
      mathLabels: this.lastDraw.mathLabels,
      typeset: { labels: this.mathLabels.typesetCount, ms: round2(this.mathLabels.typesetMs) },
      frames: this.frames,
      onScreen: this.lastDraw.onScreen,
      mode: this.lastDraw.mode,
      labelBoxes: this.lastDraw.labelBoxes.map((b) => [round2(b.x0), round2(b.y0), round2(b.x1), round2(b.y1)]),
      setData: { ...this.lastSetData, ms: round2(this.lastSetData.ms) },
    };
  }

  destroy(): void {
    this.destroyed = true;
    this.stopThemeFollow();
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.saveCamera();
    this.sim.stop();
    this.sceneLayer.dispose();
    this.mathLabels.dispose();
    this.resize.disconnect();
    select(this.canvas).on('.zoom', null);
    window.removeEventListener('pagehide', this.onPageHide);
    this.canvas.removeEventListener('pointerdown', this.onPointerDown);
    this.canvas.removeEventListener('pointermove', this.onPointerMove);
    this.canvas.removeEventListener('pointerup', this.onPointerUp);
    this.canvas.removeEventListener('pointercancel', this.onPointerUp);
    this.canvas.removeEventListener('pointerleave', this.onPointerLeave);
    this.canvas.removeEventListener('click', this.onClick);
    this.canvas.removeEventListener('contextmenu', this.onContextMenu);
  }
}
