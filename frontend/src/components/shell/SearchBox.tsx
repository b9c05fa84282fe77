// Search from the sidebar (issue 31 item 5, decision 0044): lesson titles and messages,
// propositions and practice sets, ranked by the server's full-text index (GET /api/search).
// Typing waits a moment, then asks; an older answer never replaces a newer one. A result opens
// where it matched: a lesson at its message, home focused on a proposition, a set at its problem.
import './searchBox.css';
import { useEffect, useId, useRef, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { ApiError, describeError } from '../../core/errors';
import { kindWord, readComplete, readResults, searchText, type SearchResult } from '../../core/machine_room/search';

const WAIT_MS = 150;

async function search(q: string, signal: AbortSignal): Promise<{ found: SearchResult[]; complete: boolean }> {
  const res = await fetch(`/api/search?${new URLSearchParams({ q, limit: '20' })}`, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) throw new ApiError(res.status, await res.text().catch(() => ''));
  const raw: unknown = await res.json();
  return { found: readResults(raw), complete: readComplete(raw) };
}

export default function SearchBox() {
  const [text, setText] = useState('');
  const [results, setResults] = useState<SearchResult[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [complete, setComplete] = useState(true);
  const [active, setActive] = useState(0);
  const navigate = useNavigate();
  const listId = useId();
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const q = searchText(text);
    if (q === null) {
      setResults(null);
      setError(null);
      return;
    }
    const abort = new AbortController();
    const timer = window.setTimeout(() => {
      search(q, abort.signal).then(
        ({ found, complete: whole }) => {
          setResults(found);
          setComplete(whole);
          setActive(0);
          setError(null);
        },
        (err: unknown) => {
          if (abort.signal.aborted) return;
          setError(`Search failed: ${describeError(err).detail}`);
        },
      );
    }, WAIT_MS);
    return () => {
      window.clearTimeout(timer);
      abort.abort();
    };
  }, [text]);

  const open = (r: SearchResult) => {
    setText('');
    setResults(null);
    input.current?.blur();
    navigate(r.href);
  };

  const onKey = (e: React.KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Escape') {
      setText('');
      return;
    }
    if (!results?.length) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((i) => (i + step + results.length) % results.length);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      const r = results[active];
      if (r) open(r);
    }
  };

  return (
    <div className="search-box" role="search">
      <input
        ref={input}
        type="search"
        className="search-input"
        data-testid="search-input"
        placeholder="Search lessons, graph, practice"
        aria-label="Search lessons, propositions and practice sets"
        aria-controls={listId}
        aria-expanded={results !== null}
        aria-activedescendant={results?.length ? `${listId}-${active}` : undefined}
        role="combobox"
        aria-autocomplete="list"
        value={text}
        maxLength={200}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
      />
      {error && (
        <p className="sidebar-error small" role="alert" data-testid="search-error">
          {error}
        </p>
      )}
      {results !== null && !error && (
        <ul className="search-results" id={listId} role="listbox" data-testid="search-results" aria-label="Search results">
          {!complete && (
            <li className="muted small search-none" data-testid="search-indexing">
              Still indexing your lessons and graph: some matches may be missing.
            </li>
          )}
          {results.length === 0 && <li className="muted small search-none">Nothing matches “{text.trim()}”.</li>}
          {results.map((r, i) => (
            <li
              key={`${r.kind}:${r.id}:${r.target}`}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              className={i === active ? 'search-result active' : 'search-result'}
              data-testid="search-result"
              data-kind={r.kind}
              data-href={r.href}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => open(r)}
            >
              <span className="search-result-head">
                <span className="search-kind">{kindWord(r.kind)}</span> <span className="search-label">{r.label}</span>
              </span>
              {r.snippet.length > 0 && (
                <span className="search-snippet">
                  {r.snippet.map((s, j) => (s.match ? <mark key={j}>{s.text}</mark> : <span key={j}>{s.text}</span>))}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
