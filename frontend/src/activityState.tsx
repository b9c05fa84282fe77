import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import * as api from './api';
import { countRunning, type ActivityRow, type PendingLesson } from './core/machine_room/activity';
import { describeError } from './core/errors';
import type { Baseline, ImportFileResult } from './core/library/imports';
import { useServerEvents } from './serverEvents';

// The background activity feed (GET /api/activity), shared by the sidebar's counter, the
// activity dock and the Import notes page. It follows the events channel: every
// `activity-changed` (a job's phase, a lesson's pending flush) and every (re)connect re-reads it,
// one read per ~250 ms window however bursty the pipeline is. The Import page's results live here
// too, so they survive leaving the page.

/** One file of an import, with what is needed to follow its run. */
export interface ImportEntry {
  /** Unique per posted file. */
  key: string;
  result: ImportFileResult;
  /** Activity rows as they were when the import was posted (null: unknown). */
  baseline: Baseline | null;
  /** `fetches` when the answer arrived (to tell "no rows yet" from "lost"). */
  fetchesAtPost: number;
}

interface ActivityState {
  rows: ActivityRow[] | null;
  /** Lessons whose new teaching waits for a trigger (idle, the running reply, the running part). */
  pending: PendingLesson[];
  error: string | null;
  /** Successful reads so far (and a reader for event handlers, never stale). */
  fetches: number;
  fetchCount: () => number;
  refresh: () => Promise<ActivityRow[] | null>;
  runningCount: number;
  dockOpen: boolean;
  setDockOpen: (open: boolean) => void;
  /** Sources with an abort request in flight. */
  aborting: ReadonlySet<string>;
  /** Abort a source's run; resolves to a sentence for the user when nothing was aborted. */
  abort: (source: string) => Promise<string | null>;
  imports: ImportEntry[];
  /** Newest first; a file imported again replaces its earlier entry. */
  addImports: (entries: ImportEntry[]) => void;
  removeImports: (keys: readonly string[]) => void;
}

const ActivityContext = createContext<ActivityState | null>(null);

export function ActivityProvider({ children }: { children: ReactNode }) {
  const [rows, setRows] = useState<ActivityRow[] | null>(null);
  const [pending, setPending] = useState<PendingLesson[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [fetches, setFetches] = useState(0);
  const [dockOpen, setDockOpen] = useState(false);
  const [aborting, setAborting] = useState<ReadonlySet<string>>(new Set());
  const [imports, setImports] = useState<ImportEntry[]>([]);
  const seq = useRef(0);
  const fetchesRef = useRef(0);
  const fetchCount = useCallback(() => fetchesRef.current, []);

  const refresh = useCallback(async (): Promise<ActivityRow[] | null> => {
    const mine = ++seq.current;
    try {
      const next = await api.getActivity();
      if (mine !== seq.current) return next.rows;
      setRows(next.rows);
      setPending(next.pending);
      setError(null);
      fetchesRef.current += 1;
      setFetches(fetchesRef.current);
      return next.rows;
    } catch (err) {
      if (mine === seq.current) setError(describeError(err).detail);
      return null;
    }
  }, []);

  const runningCount = countRunning(rows);

  // First read (for the sidebar's counter); then the channel says when to read again.
  useEffect(() => {
    void refresh();
  }, [refresh]);
  useServerEvents(['activity-changed'], () => void refresh());

  const abort = useCallback(
    async (source: string): Promise<string | null> => {
      setAborting((s) => new Set(s).add(source));
      try {
        const aborted = await api.abortActivity(source);
        return aborted ? null : 'Nothing to abort: it had already ended.';
      } catch (err) {
        return describeError(err).detail;
      } finally {
        setAborting((s) => {
          const next = new Set(s);
          next.delete(source);
          return next;
        });
        void refresh();
      }
    },
    [refresh],
  );

  const addImports = useCallback((entries: ImportEntry[]) => {
    setImports((current) => {
      const names = new Set(entries.map((e) => e.result.name));
      return [...entries, ...current.filter((e) => !names.has(e.result.name))];
    });
  }, []);

  const removeImports = useCallback((keys: readonly string[]) => {
    const drop = new Set(keys);
    setImports((current) => current.filter((e) => !drop.has(e.key)));
  }, []);

  const value = useMemo(
    () => ({
      rows,
      pending,
      error,
      fetches,
      fetchCount,
      refresh,
      runningCount,
      dockOpen,
      setDockOpen,
      aborting,
      abort,
      imports,
      addImports,
      removeImports,
    }),
    [rows, pending, error, fetches, fetchCount, refresh, runningCount, dockOpen, aborting, abort, imports, addImports, removeImports],
  );
  return <ActivityContext.Provider value={value}>{children}</ActivityContext.Provider>;
}

export function useActivity(): ActivityState {
  const ctx = useContext(ActivityContext);
  if (!ctx) throw new Error('useActivity must be used inside <ActivityProvider>');
  return ctx;
}
