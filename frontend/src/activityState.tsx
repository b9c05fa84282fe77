import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import * as api from './api';
import { useAppState } from './appState';
import { countRunning, type ActivityRow, type PendingLesson } from './core/activity';
import { describeError } from './core/errors';
import type { Baseline, ImportFileResult } from './core/imports';

// The background activity feed (GET /api/activity), shared by the sidebar's
// counter, the activity dock and the Import notes page. One poller:
// - every ~1 s while a page asks for it (the Import page, while its files run);
// - every ~2 s while the dock is open or any job runs;
// - otherwise not at all (one read at start, when the tab comes back, and after
//   a lesson turn ends, since a turn can start a lesson's extraction).
// The Import page's results live here too, so they survive leaving the page.

const FAST_POLL_MS = 1000;
const POLL_MS = 2000;
/** A lesson's extraction starts as its turn settles: look shortly after. */
const AFTER_TURN_MS = 1200;

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
  requestFastPolling: () => () => void;
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
  const [fastDemand, setFastDemand] = useState(0);
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
  const interval = fastDemand > 0 ? FAST_POLL_MS : dockOpen || runningCount > 0 ? POLL_MS : null;

  // First read (for the sidebar's counter), and again whenever the tab comes back.
  useEffect(() => {
    void refresh();
    const onVisible = () => {
      if (document.visibilityState === 'visible') void refresh();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, [refresh]);

  useEffect(() => {
    if (dockOpen) void refresh();
  }, [dockOpen, refresh]);

  // The poller: one request at a time, paused while the tab is hidden.
  useEffect(() => {
    if (interval === null) return;
    let stopped = false;
    let timer = 0;
    const tick = async () => {
      if (document.visibilityState === 'visible') await refresh();
      if (!stopped) timer = window.setTimeout(() => void tick(), interval);
    };
    timer = window.setTimeout(() => void tick(), interval);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [interval, refresh]);

  // A lesson waiting for its idle trigger starts being read at `flushAt`: look shortly after.
  const nextFlush = pending.reduce<number | null>((soonest, p) => {
    const due = p.flushAt ? Date.parse(p.flushAt) : NaN;
    return Number.isFinite(due) && (soonest === null || due < soonest) ? due : soonest;
  }, null);
  useEffect(() => {
    if (nextFlush === null) return;
    const timer = window.setTimeout(() => void refresh(), Math.max(0, nextFlush - Date.now()) + AFTER_TURN_MS);
    return () => window.clearTimeout(timer);
  }, [nextFlush, refresh]);

  // A lesson turn that ends may have started that lesson's extraction.
  const { chats } = useAppState();
  const turnsRunning = chats?.filter((c) => c.running).length ?? 0;
  const lastTurnsRunning = useRef(turnsRunning);
  useEffect(() => {
    const before = lastTurnsRunning.current;
    lastTurnsRunning.current = turnsRunning;
    if (turnsRunning >= before) return;
    const timer = window.setTimeout(() => void refresh(), AFTER_TURN_MS);
    return () => window.clearTimeout(timer);
  }, [turnsRunning, refresh]);

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

  const requestFastPolling = useCallback(() => {
    setFastDemand((n) => n + 1);
    return () => setFastDemand((n) => n - 1);
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
      requestFastPolling,
    }),
    [rows, pending, error, fetches, fetchCount, refresh, runningCount, dockOpen, aborting, abort, imports, addImports, removeImports, requestFastPolling],
  );
  return <ActivityContext.Provider value={value}>{children}</ActivityContext.Provider>;
}

export function useActivity(): ActivityState {
  const ctx = useContext(ActivityContext);
  if (!ctx) throw new Error('useActivity must be used inside <ActivityProvider>');
  return ctx;
}

/** Poll the feed every ~1 s while `active` (e.g. while imported files are still running). */
export function useFastActivityPolling(active: boolean): void {
  const { requestFastPolling } = useActivity();
  useEffect(() => {
    if (!active) return;
    return requestFastPolling();
  }, [active, requestFastPolling]);
}
