import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import type { GraphData, RenderSettings } from '../../../core/library/graph';
import { GraphRenderer, type GraphStats, type RendererEvents } from './renderer';

/** What tests (Playwright) and the page may ask of the live graph: `window.__lhGraph`. */
export interface GraphHandle {
  nodeScreenPosition: (id: string) => { x: number; y: number } | null;
  stats: () => GraphStats;
  /** The node id under a viewport point, or null. */
  nodeAt: (x: number, y: number) => string | null;
  panBy: (dx: number, dy: number) => void;
  fit: () => void;
  focus: (id: string, minZoom?: number) => void;
}

declare global {
  interface Window {
    __lhGraph?: GraphHandle;
  }
}

interface Props {
  data: GraphData;
  colors: Map<string, string>;
  labels: Map<string, string>;
  settings: RenderSettings;
  selectedId: string | null;
  events: RendererEvents;
}

/** The canvas the renderer draws on; owns the renderer's life and `window.__lhGraph`. */
const GraphCanvas = forwardRef<GraphHandle, Props>(function GraphCanvas({ data, colors, labels, settings, selectedId, events }, ref) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const rendererRef = useRef<GraphRenderer | null>(null);
  const eventsRef = useRef(events);
  eventsRef.current = events;

  const handle = useRef<GraphHandle>({
    nodeScreenPosition: (id) => rendererRef.current?.nodeScreenPosition(id) ?? null,
    stats: () =>
      rendererRef.current?.stats() ?? {
        nodes: 0,
        propositions: 0,
        implications: 0,
        links: 0,
        clusters: 0,
        fps: null,
        drawMs: null,
        settled: false,
        zoom: 1,
        hullLabels: [],
        folderLabels: [],
        fileLabels: [],
        labels: 0,
        mathLabels: 0,
        typeset: { labels: 0, ms: 0 },
        frames: 0,
        onScreen: 0,
        mode: 'direct',
        labelBoxes: [],
      },
    nodeAt: (x, y) => rendererRef.current?.hitClient(x, y)?.id ?? null,
    panBy: (dx, dy) => rendererRef.current?.panBy(dx, dy),
    fit: () => rendererRef.current?.fit(),
    focus: (id, minZoom) => rendererRef.current?.focus(id, minZoom),
  }).current;
  useImperativeHandle(ref, () => handle, [handle]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const renderer = new GraphRenderer(canvas, {
      onClick: (id) => eventsRef.current.onClick(id),
      onContextMenu: (id) => eventsRef.current.onContextMenu(id),
      onDrop: (id, x, y) => eventsRef.current.onDrop(id, x, y),
    });
    rendererRef.current = renderer;
    window.__lhGraph = handle;
    return () => {
      renderer.destroy();
      rendererRef.current = null;
      if (window.__lhGraph === handle) delete window.__lhGraph;
    };
  }, [handle]);

  // Order matters on the first render: settings, then data (the camera fits once data is there).
  useEffect(() => {
    rendererRef.current?.setSettings(settings);
  }, [settings]);

  useEffect(() => {
    rendererRef.current?.setData(data, colors, labels);
  }, [data, colors, labels]);

  useEffect(() => {
    rendererRef.current?.setSelected(selectedId);
  }, [selectedId, data]);

  return <canvas ref={canvasRef} className="graph-canvas" data-testid="graph-canvas" aria-label="Knowledge graph" role="img" />;
});

export default GraphCanvas;
