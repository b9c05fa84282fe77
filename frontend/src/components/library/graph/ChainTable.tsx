import { Fragment, useDeferredValue, useEffect, useMemo, useRef, useState, type CSSProperties, type ReactNode } from 'react';
import {
  buildTable,
  chainSearch,
  checkState,
  filterTable,
  highlightParts,
  nextSort,
  rankTable,
  sortTable,
  toggleMembers,
  type ChainMatch,
  type CheckState,
  type SortKey,
  type TableChain,
} from '../../../core/library/chainTable';
import { groupByFolder } from '../../../core/library/chainFolders';
import { chainsOf, countsWords, plural, type GraphData } from '../../../core/library/graph';
import { chainsForSelection, selectionSummary } from '../../../core/library/chainSelection';
import { formatFull, formatRelative } from '../../../core/time';
import { plainMath } from '../../../core/math';
import MathText from '../../MathText';
import ChainLine from './ChainLine';
import { SelectionExportMenu } from './GraphExportMenu';
import './chainTable.css';

interface Props {
  data: GraphData;
  selection: ReadonlySet<string>;
  onSelectionChange: (next: Set<string>) => void;
  /** Make a problem set of the selection (its node ids, and how many chains they make). */
  onGenerate: (nodeIds: string[], chains: number) => void;
  /** Ask to delete these ids (propositions or one chain's `arg_` id): the parent confirms. */
  onDelete: (ids: string[]) => void;
  /** Show a node on the canvas (closes the table). */
  onShowNode: (id: string) => void;
  onClose: () => void;
  /** A dialog is open above the table: Escape belongs to it. */
  escapeBlocked: boolean;
}

/** Chain rows rendered at most (search results and expanded clusters alike). */
const MAX_ROWS = 600;

const COLUMNS: { key: SortKey; label: string; className: string }[] = [
  { key: 'name', label: 'Name', className: 'col-name' },
  { key: 'props', label: 'Props', className: 'col-props' },
  { key: 'created', label: 'Created', className: 'col-created' },
];

/** The chain table: CLUSTER → REASONING CHAIN → PROPOSITION STATEMENTS, sortable, searchable, selectable. */
export default function ChainTable({ data, selection, onSelectionChange, onGenerate, onDelete, onShowNode, onClose, escapeBlocked }: Props) {
  const model = useMemo(() => buildTable(data), [data]);
  const search = useMemo(() => chainSearch(model), [model]);
  const chains = useMemo(() => chainsOf(data), [data]);
  const [sort, setSort] = useState<{ key: SortKey; dir: 'asc' | 'desc' }>({ key: 'name', dir: 'asc' });
  const [query, setQuery] = useState('');
  const deferredQuery = useDeferredValue(query);
  const [openClusters, setOpenClusters] = useState<ReadonlySet<string>>(new Set());
  /** Folders the learner collapsed (folders start open; a search opens every one). */
  const [closedFolders, setClosedFolders] = useState<ReadonlySet<string>>(new Set());
  const [openChains, setOpenChains] = useState<ReadonlySet<string>>(new Set());
  const searchRef = useRef<HTMLInputElement>(null);

  const matches = useMemo(() => search(deferredQuery), [search, deferredQuery]);
  const rows = useMemo(() => rankTable(filterTable(sortTable(model.clusters, sort.key, sort.dir), matches), matches), [model, sort, matches]);
  const grouped = useMemo(() => groupByFolder(rows, data.folders), [rows, data.folders]);
  const searching = matches !== null;
  const practice = useMemo(() => chainsForSelection(selection, chains), [selection, chains]);
  const { counts } = model;

  useEffect(() => {
    searchRef.current?.focus();
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !escapeBlocked) onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, escapeBlocked]);

  const toggle = (set: ReadonlySet<string>, id: string) => {
    const next = new Set(set);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    return next;
  };

  const nodeName = (id: string) => model.nodes.get(id)?.name ?? id;
  const chip = (id: string) => ({ id, name: nodeName(id) });

  let budget = MAX_ROWS;
  let hidden = 0;
  const body: ReactNode[] = [];
  const pushCluster = (cluster: (typeof rows)[number], depth: number | null) => {
    const open = searching || openClusters.has(cluster.key);
    body.push(
      <tr
        key={`c:${cluster.key}`}
        className={depth === null ? 'row-cluster' : 'row-cluster row-in-folder'}
        style={depth === null ? undefined : ({ '--folder-depth': depth + 1 } as CSSProperties)}
        data-testid="table-cluster"
        data-cluster-key={cluster.key}
      >
        <td className="col-check">
          <Check state={checkState(cluster.members, selection)} label={`Select ${cluster.label}`} testId="select-cluster" onChange={() => onSelectionChange(toggleMembers(selection, cluster.members))} />
        </td>
        <td className="col-name">
          <button
            type="button"
            className="row-toggle"
            data-testid="toggle-cluster"
            aria-expanded={open}
            disabled={searching}
            onClick={() => setOpenClusters((s) => toggle(s, cluster.key))}
          >
            <Caret open={open} />
            <span className={`source-kind source-${cluster.kind}`}>{cluster.kind === 'chat' ? 'Lesson' : 'Notes'}</span>
            <span className="cluster-name">{cluster.label}</span>
            <span className="muted small">
              {' '}
              · {plural(cluster.props, 'proposition')} · {plural(cluster.storedChains, 'chain')}
            </span>
          </button>
        </td>
        <td className="col-props">{cluster.props}</td>
        <td className="col-created" title={formatFull(cluster.createdAt)}>
          {formatRelative(cluster.createdAt)}
        </td>
        <td className="col-actions" />
      </tr>,
    );
    if (!open) return;
    for (const chain of cluster.chains) {
      if (budget <= 0) {
        hidden++;
        continue;
      }
      budget--;
      body.push(
        <ChainRows
          key={`h:${chain.id}`}
          chain={chain}
          open={openChains.has(chain.id)}
          selection={selection}
          nodes={model.nodes}
          chip={chip}
          match={matches?.get(chain.id)}
          onToggle={() => setOpenChains((s) => toggle(s, chain.id))}
          onSelect={(members) => onSelectionChange(toggleMembers(selection, members))}
          onDelete={() => onDelete([chain.id])}
          onShowNode={onShowNode}
        />,
      );
    }
  };
  // Folders first (issue 17 item 2): each folder row, then its files' rows when it is open.
  for (const group of grouped.groups) {
    const { folder } = group;
    const open = searching || !closedFolders.has(folder.key);
    body.push(
      <tr key={`f:${folder.key}`} className="row-folder" style={{ '--folder-depth': group.depth } as CSSProperties} data-testid="table-folder" data-folder-key={folder.key}>
        <td className="col-check">
          <Check state={checkState(group.members, selection)} label={`Select folder ${folder.label}`} testId="select-folder" onChange={() => onSelectionChange(toggleMembers(selection, group.members))} />
        </td>
        <td className="col-name">
          <button
            type="button"
            className="row-toggle row-toggle-folder"
            data-testid="toggle-folder"
            aria-expanded={open}
            disabled={searching}
            title={folder.path}
            onClick={() => setClosedFolders((s) => toggle(s, folder.key))}
          >
            <Caret open={open} />
            <span className="source-kind source-folder">Folder</span>
            <span className="cluster-name">{folder.label}</span>
            <span className="muted small">
              {' '}
              · {plural(group.clusters.length, 'file')} · {plural(group.props, 'proposition')}
            </span>
          </button>
        </td>
        <td className="col-props">{group.props}</td>
        <td className="col-created" />
        <td className="col-actions" />
      </tr>,
    );
    if (open) for (const cluster of group.clusters) pushCluster(cluster, group.depth);
  }
  for (const cluster of grouped.loose) pushCluster(cluster, null);

  return (
    <div className="chain-table-overlay" data-testid="chain-table" role="dialog" aria-modal="false" aria-label="Reasoning chains">
      <header className="chain-table-head">
        <div>
          <h2>Reasoning chains</h2>
          <p className="muted small">
            <span data-testid="table-counts">
              {countsWords(counts)}
            </span>{' '}
            · a chain lives where its conclusion was born; a proposition in no chain is listed on its own
          </p>
        </div>
        <input
          ref={searchRef}
          type="search"
          className="chain-search"
          data-testid="chain-search"
          placeholder="Search names, aliases, statements…"
          aria-label="Search chains"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="button" className="icon-button icon-large" data-testid="chain-table-close" aria-label="Close the chain table" title="Close (Esc)" onClick={onClose}>
          ×
        </button>
      </header>
      <div className={selection.size > 0 ? 'chain-table-scroll has-selection' : 'chain-table-scroll'}>
        <table className="chain-table">
          <thead>
            <tr>
              <th className="col-check" />
              {COLUMNS.map((c) => (
                <th key={c.key} className={c.className} aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
                  <button type="button" className="sort-button" data-testid={`sort-${c.key}`} onClick={() => setSort((s) => nextSort(s, c.key))}>
                    {c.label}
                    <span className="sort-mark" aria-hidden="true">
                      {sort.key === c.key ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
                    </span>
                  </button>
                </th>
              ))}
              <th className="col-actions" />
            </tr>
          </thead>
          <tbody>{body}</tbody>
        </table>
        {searching && rows.length === 0 && (
          <p className="chain-table-empty muted" data-testid="chain-search-empty">
            Nothing matches “{deferredQuery.trim()}”.
          </p>
        )}
        {hidden > 0 && (
          <p className="chain-table-empty muted small" data-testid="chain-rows-hidden">
            {hidden} more {hidden === 1 ? 'chain is' : 'chains are'} not shown: narrow the search or collapse a session.
          </p>
        )}
      </div>
      {selection.size > 0 && (
        <div className="selection-bar" data-testid="selection-bar" role="region" aria-label="Selection">
          <span className="selection-summary" data-testid="selection-summary">
            {selectionSummary(selection.size, practice.count)}
          </span>
          <button type="button" className="btn btn-small" data-testid="selection-clear" onClick={() => onSelectionChange(new Set())}>
            Clear
          </button>
          <button
            type="button"
            className="btn btn-small btn-primary"
            data-testid="selection-generate"
            title="Make a problem set of these nodes"
            onClick={() => onGenerate([...selection], practice.count)}
          >
            Generate problem set
          </button>
          <SelectionExportMenu selection={selection} chains={practice.chains.length} />
          {/* Delete fenced at the bar's right end (seed §6): a divider, the red pair, a trash icon;
              the safe actions and the destructive one never blend. */}
          <span className="selection-fence" role="separator" aria-orientation="vertical" data-testid="selection-fence" />
          <button type="button" className="btn btn-small btn-danger selection-delete" data-testid="selection-delete" onClick={() => onDelete([...selection])}>
            <TrashIcon />
            Delete
          </button>
        </div>
      )}
    </div>
  );
}

interface ChainRowsProps {
  chain: TableChain;
  open: boolean;
  selection: ReadonlySet<string>;
  nodes: ReadonlyMap<string, { name: string; statement: string; createdAt: string }>;
  chip: (id: string) => { id: string; name: string };
  /** Why this row matched the search (absent when not searching). */
  match?: ChainMatch;
  onToggle: () => void;
  onSelect: (members: string[]) => void;
  onDelete: () => void;
  onShowNode: (id: string) => void;
}

function ChainRows({ chain, open, selection, nodes, chip, match, onToggle, onSelect, onDelete, onShowNode }: ChainRowsProps) {
  return (
    <Fragment>
      <tr className="row-chain" data-testid="table-chain" data-chain-id={chain.id} data-lonely={chain.lonely ? 'true' : undefined}>
        <td className="col-check">
          <Check state={checkState(chain.members, selection)} label={`Select ${plainMath(chain.line)}`} testId="select-chain" onChange={() => onSelect(chain.members)} />
        </td>
        <td className="col-name">
          <button type="button" className="row-toggle row-toggle-chain" data-testid="toggle-chain" aria-expanded={open} onClick={onToggle}>
            <Caret open={open} />
            <ChainLine premises={chain.premises.map(chip)} conclusion={chip(chain.conclusion)} />
          </button>
          {match && <MatchWhy match={match} name={nodes.get(match.nodeId)?.name ?? match.nodeId} />}
        </td>
        <td className="col-props">{chain.members.length}</td>
        <td className="col-created" title={formatFull(chain.createdAt)}>
          {formatRelative(chain.createdAt)}
        </td>
        <td className="col-actions">
          {!chain.lonely && (
            <button type="button" className="icon-button row-delete" data-testid="chain-delete" aria-label="Delete this chain" title="Delete this chain (its propositions stay)" onClick={onDelete}>
              <TrashIcon />
            </button>
          )}
        </td>
      </tr>
      {open &&
        chain.members.map((id) => {
          const node = nodes.get(id);
          const role = chain.lonely ? null : id === chain.conclusion ? 'conclusion' : 'premise';
          return (
            <tr key={`${chain.id}:${id}`} className="row-statement" data-testid="table-statement" data-node-id={id}>
              <td className="col-check">
                <Check state={selection.has(id) ? 'all' : 'none'} label={`Select ${plainMath(node?.name ?? id)}`} testId="select-node" onChange={() => onSelect([id])} />
              </td>
              <td className="col-name">
                <div className="statement-cell">
                  <button type="button" className="chip chip-button" title="Show on the graph" onClick={() => onShowNode(id)}>
                    <MathText text={node?.name ?? id} />
                  </button>
                  {role && <span className={`role role-${role}`}>{role}</span>}
                  <span className="statement-text">
                    <MathText text={node?.statement ?? ''} />
                  </span>
                </div>
              </td>
              <td className="col-props" />
              <td className="col-created" title={formatFull(node?.createdAt)}>
                {formatRelative(node?.createdAt)}
              </td>
              <td className="col-actions" />
            </tr>
          );
        })}
    </Fragment>
  );
}

const FIELD_WORDS: Record<ChainMatch['field'], string> = { title: 'name', name: 'name', alias: 'alias', statement: 'statement' };
/** Characters of a long statement kept either side of the first hit. */
const SNIPPET_SIDE = 48;

/** "Matched in the statement of Priority queue: … built on a [heap]." – why a search row is listed. */
function MatchWhy({ match, name }: { match: ChainMatch; name: string }) {
  let { text } = match;
  let ranges = match.ranges;
  let before = '';
  let after = '';
  if (ranges.length && text.length > 2 * SNIPPET_SIDE + 20) {
    const from = Math.max(0, ranges[0][0] - SNIPPET_SIDE);
    const to = Math.min(text.length, ranges[0][1] + SNIPPET_SIDE);
    before = from > 0 ? '… ' : '';
    after = to < text.length ? ' …' : '';
    text = text.slice(from, to);
    ranges = ranges.map(([a, b]) => [a - from, b - from] as [number, number]).filter(([a, b]) => a >= 0 && b <= text.length);
  }
  const where = match.field === 'title' ? 'Matched in its name' : `Matched in the ${FIELD_WORDS[match.field]} of ${plainMath(name)}`;
  return (
    <div className="chain-match muted small" data-testid="chain-match" data-field={match.field} data-node-id={match.nodeId}>
      {where}
      {match.tier === 5 ? ' (close spelling)' : ''}: {before}
      {highlightParts(text, ranges).map((p, i) => (p.hit ? <mark key={i}>{p.text}</mark> : <Fragment key={i}>{p.text}</Fragment>))}
      {after}
    </div>
  );
}

function Check({ state, label, testId, onChange }: { state: CheckState; label: string; testId: string; onChange: () => void }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = state === 'some';
  }, [state]);
  return <input ref={ref} type="checkbox" className="row-check" data-testid={testId} aria-label={label} checked={state === 'all'} onChange={onChange} />;
}

function Caret({ open }: { open: boolean }) {
  return (
    <svg className={open ? 'caret open' : 'caret'} width="12" height="12" viewBox="0 0 12 12" aria-hidden="true">
      <path d="M4 2.5 8 6l-4 3.5" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

function TrashIcon() {
  return (
    <svg width="15" height="15" viewBox="0 0 16 16" aria-hidden="true">
      <path
        d="M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.6 8.2c.05.7.6 1.3 1.3 1.3h3.2c.7 0 1.25-.6 1.3-1.3l.6-8.2M7 7v4.5M9 7v4.5"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.3"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}
