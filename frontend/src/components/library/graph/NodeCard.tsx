import './nodeCard.css';
import { Link } from 'react-router-dom';
import type { Chain, GraphNode } from '../../../core/library/graph';
import { formatFull, formatRelative } from '../../../core/time';
import MathText from '../../MathText';
import ChainLine from './ChainLine';

export interface SourceName {
  label: string;
  kind: 'chat' | 'notes' | null;
}

interface Props {
  node: GraphNode;
  nodes: ReadonlyMap<string, GraphNode>;
  chains: readonly Chain[];
  sourceName: (id: string) => SourceName;
  onSelect: (id: string) => void;
  onDelete: () => void;
  onClose: () => void;
}

const MAX_CHAINS = 6;

/** The card of the clicked node: a proposition's name, statement and birth sessions, or an implication's chain line. */
export default function NodeCard({ node, nodes, chains, sourceName, onSelect, onDelete, onClose }: Props) {
  const chip = (id: string) => ({ id, name: nodes.get(id)?.name ?? id });
  const chainView = (c: Chain) => (
    <li key={c.id}>
      <ChainLine premises={c.premises.map(chip)} conclusion={chip(c.conclusion)} onChip={onSelect} />
      <button type="button" className="link-button chain-open small" data-testid="node-card-chain" data-chain-id={c.id} onClick={() => onSelect(c.id)}>
        chain
      </button>
    </li>
  );
  const isChain = node.kind === 'implication';
  const concludes = isChain ? [] : chains.filter((c) => c.conclusion === node.id);
  const supports = isChain ? [] : chains.filter((c) => c.premises.includes(node.id));

  return (
    <aside className="node-card" data-testid="node-card" data-node-id={node.id} data-kind={node.kind} aria-label={isChain ? 'Reasoning chain' : 'Proposition'}>
      <header className="node-card-head">
        <span className="node-kind">{isChain ? 'Reasoning chain' : 'Proposition'}</span>
        <button type="button" className="icon-button" data-testid="node-card-close" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      {isChain ? (
        <div className="node-card-chain">
          <ChainLine premises={(node.premises ?? []).map(chip)} conclusion={chip(node.conclusion ?? '')} onChip={onSelect} />
        </div>
      ) : (
        <>
          <h2 className="node-name" data-testid="node-name">
            <MathText text={node.name} />
          </h2>
          <p className="node-statement" data-testid="node-statement">
            <MathText text={node.statement} />
          </p>
          {node.aliases.length > 0 && <p className="node-aliases small muted">Also called: {node.aliases.join(', ')}</p>}
        </>
      )}

      {node.sources.length > 0 && (
        <section className="node-section">
          <h3>{isChain ? 'Stated in' : 'Birth session'}</h3>
          <ul className="node-sources">
            {node.sources.map((id, i) => {
              const s = sourceName(id);
              return (
                <li key={id} data-testid="node-source" data-source-id={id} data-birth={!isChain && i === 0 ? 'true' : undefined}>
                  <span className={`source-kind source-${s.kind ?? 'unknown'}`}>{s.kind === 'chat' ? 'Lesson' : 'Notes'}</span>
                  {s.kind === 'chat' ? <Link to={`/chat/${encodeURIComponent(id)}`}>{s.label}</Link> : <span>{s.label}</span>}
                  {!isChain && i === 0 && node.sources.length > 1 && <span className="muted small"> · first</span>}
                </li>
              );
            })}
          </ul>
        </section>
      )}

      {concludes.length > 0 && (
        <section className="node-section">
          <h3>Concluded by</h3>
          <ul className="node-chains">{concludes.slice(0, MAX_CHAINS).map(chainView)}</ul>
          {concludes.length > MAX_CHAINS && <p className="muted small">and {concludes.length - MAX_CHAINS} more</p>}
        </section>
      )}
      {supports.length > 0 && (
        <section className="node-section">
          <h3>Supports</h3>
          <ul className="node-chains">{supports.slice(0, MAX_CHAINS).map(chainView)}</ul>
          {supports.length > MAX_CHAINS && <p className="muted small">and {supports.length - MAX_CHAINS} more</p>}
        </section>
      )}

      <footer className="node-card-foot">
        <span className="muted small" title={formatFull(node.createdAt)}>
          Added {formatRelative(node.createdAt)}
        </span>
        <button type="button" className="btn btn-small btn-danger-outline" data-testid="node-card-delete" onClick={onDelete}>
          {isChain ? 'Delete chain' : 'Delete'}
        </button>
      </footer>
    </aside>
  );
}
