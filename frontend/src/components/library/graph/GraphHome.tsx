import './graphHome.css';
import { useCallback, useEffect, useMemo, useRef, useState, type ComponentType } from 'react';
import { useSearchParams } from 'react-router-dom';
import * as api from '../../../api';
import { describeError } from '../../../core/errors';
import { chainsOf, clusterLabel, deletionPreview, countsWords, graphCounts, heldDeleteWords, type GraphData, type GraphNode } from '../../../core/library/graph';
import { GRAPH_UNDO_MS, hold, type Held } from '../../../core/held';
import { dismissToast, pushToast } from '../../../core/toasts';
import { assignClusterColors } from '../../../core/library/graphMath';
import GraphCanvas, { type GraphHandle } from './GraphCanvas';
import type { RendererEvents } from './renderer';
import type { GraphDataState } from './useGraphData';
import { useConfirmDelete } from '../../../useConfirmDelete';
import ChainTable from './ChainTable';
import { GraphExportMenu } from './GraphExportMenu';
import GraphDeleteDialog from './GraphDeleteDialog';
import NodeCard, { type SourceName } from './NodeCard';

/** The chain table's selection sent to practice: the node ids and how many chains they make (chainsForSelection). */
export interface PracticeSelection {
  nodeIds: string[];
  chains: number;
}

/** The dialog that makes a practice set from a selection (Practice's CreateSetDialog, handed in by
 * App.tsx: the Library does not import the Practice system, which reads the Library's graph). */
export type PracticeDialog = ComponentType<{ custom: PracticeSelection; onClose: () => void }>;

interface Props {
  graph: GraphDataState & { data: GraphData };
  practiceDialog: PracticeDialog;
}

/** The home page when the graph has nodes: the canvas, its chrome, the node card, the chain table. */
export default function GraphHome({ graph, practiceDialog: CreateSetDialog }: Props) {
  const { data, sources, settings, saveSettings, settingsError, refresh } = graph;
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [tableOpen, setTableOpen] = useState(false);
  const [selection, setSelection] = useState<Set<string>>(new Set());
  // A confirmed deletion is held GRAPH_UNDO_MS with Undo in a toast before it is sent (issue 31
  // item 6): nothing reaches the server (the merger stays the graph's only writer) until then;
  // leaving the page sends what was confirmed at once.
  const heldDeletes = useRef<Set<Held>>(new Set());
  useEffect(() => {
    const pending = heldDeletes.current;
    return () => pending.forEach((h) => h.now());
  }, []);
  const del = useConfirmDelete<string[]>(
    async (ids) => {
      const propositions = ids.filter((id) => nodes.get(id)?.kind === 'proposition').length;
      const toast = { id: 0 };
      const held: Held = hold(() => {
        heldDeletes.current.delete(held);
        dismissToast(toast.id);
        api.deleteGraphNodes(ids).then(
          () => void refresh(),
          (err: unknown) => pushToast({ text: `Not deleted: ${describeError(err).detail}` }),
        );
      }, GRAPH_UNDO_MS);
      heldDeletes.current.add(held);
      toast.id = pushToast({
        text: heldDeleteWords(ids.length, propositions),
        ms: GRAPH_UNDO_MS,
        action: {
          label: 'Undo',
          run: () => {
            held.undo();
            heldDeletes.current.delete(held);
          },
        },
      });
    },
    () => void refresh(),
  );
  const pendingDelete = del.target;
  const [settingsOpen, setSettingsOpen] = useState(false);
  const [generating, setGenerating] = useState<PracticeSelection | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const canvas = useRef<GraphHandle>(null);

  const nodes = useMemo(() => new Map(data.nodes.map((n) => [n.id, n])), [data]);
  const chains = useMemo(() => chainsOf(data), [data]);
  // keyed on the clusters: a delta that leaves them alone (a patched view reuses the array)
  // gives the canvas the same maps (issue 17)
  const clusters = data.clusters;
  const colors = useMemo(() => assignClusterColors(clusters.map((c) => c.key)), [clusters]);
  const labels = useMemo(() => new Map(clusters.map((c) => [c.key, clusterLabel(c)])), [clusters]);
  const counts = useMemo(() => graphCounts(data, chains), [data, chains]);

  // Deleted (or vanished) nodes leave the selection and the card.
  useEffect(() => {
    setSelection((s) => {
      const kept = [...s].filter((id) => nodes.has(id));
      return kept.length === s.size ? s : new Set(kept);
    });
    setSelectedId((id) => (id && nodes.has(id) ? id : null));
  }, [nodes]);

  const sourceName = useCallback(
    (id: string): SourceName => {
      const named = sources.find((s) => s.id === id);
      if (named?.title) return { label: named.title, kind: named.kind };
      const cluster = data.clusters.find((c) => c.key === id);
      if (cluster) return { label: clusterLabel(cluster), kind: cluster.kind };
      const kind = id.startsWith('src_') ? 'notes' : 'chat';
      return { label: kind === 'notes' ? 'Untitled notes' : 'A deleted lesson', kind };
    },
    [sources, data],
  );

  const askDelete = del.ask;

  const events: RendererEvents = useMemo(
    () => ({
      onClick: (id) => setSelectedId(id),
      onContextMenu: (id) => {
        setSelectedId(id);
        askDelete([id]);
      },
      onDrop: (id, x, y) => {
        api.putGraphPositions({ [id]: { x, y } }).then(
          () => setNotice(null),
          (err: unknown) => setNotice(`The new place was not saved: ${describeError(err).detail}`),
        );
      },
    }),
    [askDelete],
  );

  const closeTable = useCallback(() => setTableOpen(false), []);
  const showNode = useCallback((id: string) => {
    setTableOpen(false);
    setSelectedId(id);
    canvas.current?.focus(id, 1);
  }, []);
  // A search result opens home focused on a proposition (`/?node=<id>`, issue 31 item 5), once.
  const [params] = useSearchParams();
  const foundNode = params.get('node');
  const foundDone = useRef<string | null>(null);
  useEffect(() => {
    if (!foundNode || foundDone.current === foundNode || !nodes.has(foundNode)) return;
    foundDone.current = foundNode;
    showNode(foundNode);
  }, [foundNode, nodes, showNode]);

  // The settings popover closes on Escape and on a click elsewhere.
  const popover = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!settingsOpen) return;
    const onDown = (e: MouseEvent) => {
      if (popover.current && !popover.current.contains(e.target as Node)) setSettingsOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setSettingsOpen(false);
    };
    window.addEventListener('mousedown', onDown);
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('mousedown', onDown);
      window.removeEventListener('keydown', onKey);
    };
  }, [settingsOpen]);

  // Escape closes the card when nothing else is open.
  useEffect(() => {
    if (!selectedId || tableOpen || pendingDelete || settingsOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setSelectedId(null);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [selectedId, tableOpen, pendingDelete, settingsOpen]);

  const selected = selectedId ? nodes.get(selectedId) : undefined;
  const dialog = pendingDelete ? deleteWords(data, nodes, pendingDelete) : null;

  return (
    <div className="graph-home" data-testid="graph-home">
      <GraphCanvas ref={canvas} data={data} colors={colors} labels={labels} settings={settings} selectedId={selectedId} events={events} />

      <div className="graph-chrome">
        <div className="graph-title" data-graph-chrome>
          <h1>Knowledge graph</h1>
          <span className="graph-counts" data-testid="graph-counts">
            {countsWords(counts)}
          </span>
        </div>
        <div className="graph-tools" data-graph-chrome>
          <button type="button" className="btn btn-small graph-tool" data-testid="open-chain-table" onClick={() => setTableOpen(true)}>
            Chains
          </button>
          <button type="button" className="btn btn-small graph-tool" data-testid="graph-fit" title="Show the whole graph" onClick={() => canvas.current?.fit()}>
            Fit
          </button>
          <GraphExportMenu />
          <div className="popover-anchor" ref={popover}>
            <button
              type="button"
              className={settingsOpen ? 'btn btn-small graph-tool active' : 'btn btn-small graph-tool'}
              data-testid="graph-settings-toggle"
              aria-expanded={settingsOpen}
              aria-controls="graph-settings"
              onClick={() => setSettingsOpen((o) => !o)}
            >
              Display
            </button>
            {settingsOpen && (
              <div className="graph-popover" id="graph-settings" data-testid="graph-settings" role="group" aria-label="Display settings">
                <label className="toggle-row">
                  <input type="checkbox" data-testid="setting-labels" checked={settings.labels} onChange={(e) => void saveSettings({ labels: e.target.checked })} />
                  <span>
                    Labels
                    <span className="muted small">Names fade in as you zoom</span>
                  </span>
                </label>
                <label className="toggle-row">
                  <input type="checkbox" data-testid="setting-hulls" checked={settings.hulls} onChange={(e) => void saveSettings({ hulls: e.target.checked })} />
                  <span>
                    Session outlines
                    <span className="muted small">A shape around what each lesson or file taught</span>
                  </span>
                </label>
                {settingsError && (
                  <p className="error-text small" role="alert" data-testid="graph-settings-error">
                    {settingsError}
                  </p>
                )}
              </div>
            )}
          </div>
        </div>
      </div>

      {notice && (
        <p className="graph-notice" role="status" data-testid="graph-notice">
          {notice}
          <button type="button" className="icon-button" aria-label="Dismiss" onClick={() => setNotice(null)}>
            ×
          </button>
        </p>
      )}

      {selected && (
        <NodeCard
          node={selected}
          nodes={nodes}
          chains={chains}
          sourceName={sourceName}
          onSelect={(id) => {
            setSelectedId(id);
            canvas.current?.focus(id);
          }}
          onDelete={() => askDelete([selected.id])}
          onClose={() => setSelectedId(null)}
        />
      )}

      <p className="graph-hint" aria-hidden="true" data-graph-chrome>
        Drag to pan · scroll to zoom · drag a node to move it · right-click a node to delete it
      </p>

      {tableOpen && (
        <ChainTable
          data={data}
          selection={selection}
          onSelectionChange={setSelection}
          onGenerate={(nodeIds, chainCount) => setGenerating({ nodeIds, chains: chainCount })}
          onDelete={askDelete}
          onShowNode={showNode}
          onClose={closeTable}
          escapeBlocked={pendingDelete !== null || generating !== null}
        />
      )}

      {generating && <CreateSetDialog custom={generating} onClose={() => setGenerating(null)} />}

      {pendingDelete && dialog && (
        <GraphDeleteDialog
          names={dialog.names}
          propositions={dialog.propositions}
          extraChains={dialog.extraChains}
          busy={del.busy}
          error={del.error}
          onConfirm={() => void del.confirm()}
          onCancel={del.cancel}
        />
      )}
    </div>
  );
}

function deleteWords(data: GraphData, nodes: ReadonlyMap<string, GraphNode>, ids: readonly string[]) {
  const names: string[] = [];
  let pickedChains = 0;
  for (const id of ids) {
    const n = nodes.get(id);
    if (!n) continue;
    if (n.kind === 'implication') pickedChains++;
    names.push(n.kind === 'implication' ? n.statement : n.name);
  }
  const preview = deletionPreview(data, ids);
  return { names, propositions: preview.nodes.length, extraChains: preview.chains.length - pickedChains };
}
