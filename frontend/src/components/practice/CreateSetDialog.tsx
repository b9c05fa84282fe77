import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { useNavigate } from 'react-router-dom';
import * as api from '../../api';
import { describeError } from '../../core/errors';
import { clusterLabel, sourcesWords, type GraphCluster } from '../../core/library/graph';
import {
  clusterSetTitle,
  defaultSetTitle,
  levelOf,
  capNote,
  MAX_NOTE,
  MAX_TITLE,
  type Level,
  type LevelAxis,
  type PracticeLevels,
  type PracticeParams,
  type Presentation,
} from '../../core/practice/practice';
import { selectionSummary } from '../../core/library/chainSelection';
import { usePracticeLevels } from './usePracticeLevels';
import './createSetDialog.css';

/** The chain table's selection: the node ids and how many chains they make (chainsForSelection). */
export interface CustomSelection {
  nodeIds: string[];
  chains: number;
}

interface Props {
  /** Custom mode (from the chain table): this selection instead of the cluster picker. */
  custom?: CustomSelection;
  onClose: () => void;
  /** Where a created set goes; the default opens its exam page. */
  onCreated?: (id: string) => void;
}

/**
 * The new-set dialog: the three named levels (a 5-detent rung slider, a 3-detent cue slider, a
 * Theory|Application toggle, each with its level's name and definition), what to practise (picked
 * clusters, or the chain table's selection in custom mode), a title and an optional note.
 */
export default function CreateSetDialog({ custom, onClose, onCreated }: Props) {
  const { levels, loaded } = usePracticeLevels();
  const navigate = useNavigate();
  const [params, setParams] = useState<PracticeParams>(levels.defaults);
  const touched = useRef(false);
  const [clusters, setClusters] = useState<GraphCluster[] | null>(null);
  const [clustersError, setClustersError] = useState<string | null>(null);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [title, setTitle] = useState('');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const titleId = useId();
  const today = useMemo(() => defaultSetTitle(), []);
  const panel = useRef<HTMLDivElement>(null);

  useEffect(() => {
    panel.current?.focus();
  }, []);

  // The server's defaults, once they arrive, unless the learner already moved a control.
  useEffect(() => {
    if (loaded && !touched.current) setParams(levels.defaults);
  }, [loaded, levels]);

  useEffect(() => {
    if (custom) return;
    let live = true;
    api.getGraphClusters().then(
      (list) => live && setClusters(list),
      (err: unknown) => live && setClustersError(describeError(err).detail),
    );
    return () => {
      live = false;
    };
  }, [custom]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !busy) onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, busy]);

  const pickedClusters = useMemo(() => (clusters ?? []).filter((c) => picked.has(c.key)), [clusters, picked]);
  const nodeIds = useMemo(() => (custom ? custom.nodeIds : [...new Set(pickedClusters.flatMap((c) => c.nodeIds))]), [custom, pickedClusters]);
  const pickedTitle = clusterSetTitle(pickedClusters.map((c) => clusterLabel(c)));
  const titleHint = custom ? today : (pickedTitle ?? today);
  const noteCap = capNote(note);

  const change = (update: Partial<PracticeParams>) => {
    touched.current = true;
    setParams((p) => ({ ...p, ...update }));
  };

  async function create() {
    if (!nodeIds.length || busy) return;
    setBusy(true);
    setError(null);
    const typed = title.trim();
    const body: api.CreateSetBody = { nodeIds, params };
    if (typed) body.title = typed;
    else if (!custom && pickedTitle) body.title = pickedTitle;
    if (noteCap.kept) body.note = noteCap.kept; // what the server keeps (it caps a longer note too)
    try {
      const id = await api.createPracticeSet(body);
      onClose();
      if (onCreated) onCreated(id);
      else navigate(`/practice/${encodeURIComponent(id)}`);
    } catch (err) {
      setError(describeError(err).detail);
      setBusy(false);
    }
  }

  const dialog = (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && !busy && onClose()}>
      <div ref={panel} tabIndex={-1} className="practice-dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="create-dialog" data-mode={custom ? 'custom' : 'clusters'}>
        <header className="practice-dialog-head">
          <h2 id={titleId}>New problem set</h2>
          <button type="button" className="icon-btn" aria-label="Close" title="Close (Esc)" disabled={busy} onClick={onClose}>
            ×
          </button>
        </header>

        <div className="practice-dialog-body">
          <section className="practice-what" aria-label="What to practise">
            {custom ? (
              <div className="practice-selection">
                <p className="practice-selection-shape" data-testid="selection-summary">
                  {selectionSummary(custom.nodeIds.length, custom.chains)}
                </p>
                <p className="muted small">
                  From your selection in the chain table. Titled “<span data-testid="default-title">{today}</span>” unless you name it below.
                </p>
              </div>
            ) : (
              <ClusterPicker
                clusters={clusters}
                error={clustersError}
                picked={picked}
                onToggle={(key) =>
                  setPicked((s) => {
                    const next = new Set(s);
                    if (next.has(key)) next.delete(key);
                    else next.add(key);
                    return next;
                  })
                }
                nodes={nodeIds.length}
              />
            )}
          </section>

          <section className="practice-levels" aria-label="Levels">
            <LevelSlider axis="rung" label="Difficulty step" help="How much of the solution you build yourself: from a worked example to an open problem." table={levels.rungs} value={params.rung} onChange={(rung) => change({ rung })} testId="rung-slider" />
            <LevelSlider axis="cue" label="How much the problem hints" help="How close the problem stays to the lesson's own wording and examples." table={levels.cues} value={params.cue} onChange={(cue) => change({ cue })} testId="cue-slider" />
            <PresentationToggle levels={levels} value={params.presentation} onChange={(presentation) => change({ presentation })} />
          </section>

          <label className="practice-field">
            <span className="practice-field-label">Title</span>
            <input
              type="text"
              data-testid="title-input"
              value={title}
              maxLength={MAX_TITLE}
              placeholder={titleHint}
              onChange={(e) => setTitle(e.target.value)}
            />
          </label>

          <label className="practice-field">
            <span className="practice-field-label">
              Note <span className="muted small">(optional: anything the problems should keep in mind)</span>
            </span>
            <textarea data-testid="note-input" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
            <span className="practice-counter muted" data-testid="note-counter">
              {noteCap.length}/{MAX_NOTE}
              {noteCap.capped && <span data-testid="note-capped"> · only the first {MAX_NOTE.toLocaleString('en')} characters are kept</span>}
            </span>
          </label>

          {error && (
            <div className="banner banner-error" role="alert" data-testid="create-error">
              {error}
            </div>
          )}
        </div>

        <footer className="modal-actions">
          <button type="button" className="btn" data-testid="create-cancel" disabled={busy} onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" data-testid="create-submit" disabled={busy || !nodeIds.length} onClick={() => void create()}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </footer>
      </div>
    </div>
  );
  // Above everything (the chain table's overlay included); rendered in place where there is no DOM.
  return typeof document === 'undefined' ? dialog : createPortal(dialog, document.body);
}

function ClusterPicker({
  clusters,
  error,
  picked,
  onToggle,
  nodes,
}: {
  clusters: GraphCluster[] | null;
  error: string | null;
  picked: ReadonlySet<string>;
  onToggle: (key: string) => void;
  nodes: number;
}) {
  return (
    <fieldset className="cluster-picker" data-testid="cluster-picker">
      <legend>Practise what these taught</legend>
      {error && (
        <p className="error-text small" role="alert">
          Could not load your lessons and notes: {error}
        </p>
      )}
      {clusters === null && !error && <p className="muted small">Loading…</p>}
      {clusters && clusters.length === 0 && <p className="muted small">Nothing in your graph yet: take a lesson or import notes first.</p>}
      {clusters && clusters.length > 0 && (
        <ul className="cluster-options">
          {clusters.map((c) => (
            <li key={c.key}>
              <label className="cluster-option" data-testid="cluster-option" data-cluster-key={c.key}>
                <input type="checkbox" checked={picked.has(c.key)} onChange={() => onToggle(c.key)} />
                <span className={`kind-tag kind-${c.kind}`}>{c.kind === 'chat' ? 'Lesson' : 'Notes'}</span>
                <span className="cluster-option-name">{clusterLabel(c)}</span>
                <span className="muted small">
                  {c.nodeCount} {c.nodeCount === 1 ? 'node' : 'nodes'}
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
      {picked.size > 0 && (
        <p className="muted small" data-testid="picked-summary">
          {pickedWords(clusters ?? [], picked)} · {nodes} {nodes === 1 ? 'node' : 'nodes'}
        </p>
      )}
    </fieldset>
  );
}

/** The picked clusters as sources by kind ("1 lesson · 2 notes"), never "sessions" (issue 28 item 7). */
function pickedWords(clusters: readonly GraphCluster[], picked: ReadonlySet<string>): string {
  const lessons = clusters.filter((c) => picked.has(c.key) && c.kind === 'chat').length;
  return sourcesWords(lessons, picked.size - lessons);
}

/** One numeric axis as a stepped slider: a detent per level, its name and definition below. */
export function LevelSlider({
  axis,
  label,
  help,
  table,
  value,
  onChange,
  testId,
}: {
  axis: Exclude<LevelAxis, 'presentation'>;
  label: string;
  /** One plain line under the label: what the slider changes. */
  help?: string;
  table: readonly Level<number>[];
  value: number;
  onChange: (value: number) => void;
  testId: string;
}) {
  const id = useId();
  const level = table.find((l) => l.value === value) ?? null;
  return (
    <div className="level-control" data-testid={`level-${axis}`}>
      <label htmlFor={id} className="practice-field-label">
        {label}
      </label>
      {help && (
        <p className="level-help muted small" id={`${id}-help`}>
          {help}
        </p>
      )}
      <input
        id={id}
        aria-describedby={help ? `${id}-help` : undefined}
        type="range"
        className="level-slider"
        min={0}
        max={table.length - 1}
        step={1}
        value={value}
        aria-valuetext={level?.name}
        data-testid={testId}
        onChange={(e) => onChange(Number(e.target.value))}
      />
      <div className="level-ticks" style={{ gridTemplateColumns: `repeat(${table.length}, 1fr)` }}>
        {table.map((l) => (
          <button key={l.value} type="button" tabIndex={-1} className={l.value === value ? 'level-tick on' : 'level-tick'} title={l.definition} onClick={() => onChange(l.value)}>
            {l.name}
          </button>
        ))}
      </div>
      <LevelWords axis={axis} level={level} />
    </div>
  );
}

/** Theory | Application. */
export function PresentationToggle({ levels, value, onChange }: { levels: PracticeLevels; value: Presentation; onChange: (value: Presentation) => void }) {
  return (
    <div className="level-control" data-testid="level-presentation">
      <span className="practice-field-label">Presentation</span>
      <div className="segmented" role="group" aria-label="Presentation">
        {levels.presentations.map((p) => (
          <button
            key={p.value}
            type="button"
            className={p.value === value ? 'segment on' : 'segment'}
            aria-pressed={p.value === value}
            data-testid={`presentation-${p.value}`}
            onClick={() => onChange(p.value)}
          >
            {p.name}
          </button>
        ))}
      </div>
      <LevelWords axis="presentation" level={levelOf(levels, 'presentation', value)} />
    </div>
  );
}

function LevelWords({ axis, level }: { axis: LevelAxis; level: Level | null }) {
  return (
    <p className="level-words">
      <strong data-testid={`level-name-${axis}`}>{level?.name ?? 'Unknown level'}</strong>
      {level?.definition && (
        <>
          {' — '}
          <span data-testid={`level-definition-${axis}`}>{level.definition}</span>
        </>
      )}
    </p>
  );
}
