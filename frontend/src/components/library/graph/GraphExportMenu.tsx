import { useEffect, useRef, useState, type ReactNode } from 'react';
import * as api from '../../../api';
import { describeError } from '../../../core/errors';
import { exportIds, GRAPH_EXPORTS, selectionExportWords, type GraphExport } from '../../../core/library/graphExport';
import './graphExport.css';

/** A button that opens a small menu; closes on Escape, on a click elsewhere, and after a choice. */
function Menu({ label, testId, up, children }: { label: string; testId: string; up?: boolean; children: (close: () => void) => ReactNode }) {
  const [open, setOpen] = useState(false);
  const anchor = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (anchor.current && !anchor.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        setOpen(false);
      }
    };
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [open]);
  return (
    <div className="popover-anchor graph-export" ref={anchor}>
      <button type="button" className={open ? 'btn btn-small graph-tool active' : 'btn btn-small graph-tool'} data-testid={testId} aria-expanded={open} aria-haspopup="menu" onClick={() => setOpen((o) => !o)}>
        {label}
      </button>
      {open && (
        <div className={up ? 'graph-export-menu up' : 'graph-export-menu'} role="menu" data-testid={`${testId}-menu`}>
          {children(() => setOpen(false))}
        </div>
      )}
    </div>
  );
}

function Choice({ item }: { item: GraphExport }) {
  return (
    <>
      <span className="graph-export-label">{item.label}</span>
      <span className="muted small">{item.hint}</span>
    </>
  );
}

/** The home toolbar's Export: the whole graph as an Obsidian vault or an Anki deck (plain download
 * links: the server streams the file, GET /api/graph/export/...). */
export function GraphExportMenu() {
  return (
    <Menu label="Export" testId="graph-export">
      {(close) =>
        GRAPH_EXPORTS.map((item) => (
          <a key={item.kind} role="menuitem" className="graph-export-item" data-testid={`graph-export-${item.kind}`} href={item.path} download={item.file} onClick={close}>
            <Choice item={item} />
          </a>
        ))
      }
    </Menu>
  );
}

/** The chain table's selection bar's Export: the selected propositions and the chains among them,
 * the same way (POST {ids}), saved from the answer. A refusal is shown in plain words. */
export function SelectionExportMenu({ selection, chains }: { selection: ReadonlySet<string>; chains: number }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const save = async (item: GraphExport, close: () => void) => {
    close();
    setBusy(item.kind);
    setError(null);
    try {
      const blob = await api.exportGraphSelection(item.path, exportIds(selection));
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = item.file;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (err) {
      setError(`Nothing was exported: ${describeError(err).detail}`);
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      <Menu label={busy ? 'Exporting…' : 'Export'} testId="selection-export" up>
        {(close) => (
          <>
            <span className="muted small" data-testid="selection-export-words">
              {selectionExportWords(selection.size, chains)}
            </span>
            {GRAPH_EXPORTS.map((item) => (
              <button key={item.kind} type="button" role="menuitem" className="graph-export-item" data-testid={`selection-export-${item.kind}`} disabled={busy !== null} onClick={() => void save(item, close)}>
                <Choice item={item} />
              </button>
            ))}
          </>
        )}
      </Menu>
      {error && (
        <span className="graph-export-error" role="alert" data-testid="selection-export-error">
          {error}
        </span>
      )}
    </>
  );
}
