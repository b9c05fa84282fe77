import { useCallback, useEffect, useState } from 'react';
import * as api from './api';
import { describeError } from './core/errors';
import { isBusy, type LessonCoverage } from './core/lessonGraph';

const POLL_MS = 2000;
/** After a lesson's idle time is up, look a moment later (its run has started by then). */
const AFTER_DUE_MS = 1200;

/**
 * A lesson's coverage (GET /api/chats/{id}/coverage): read on open and whenever a turn ends (a
 * settled turn may start the lesson's reading or arm its idle trigger), every 2 s while its reading
 * runs or waits on a turn, and just after its idle time is up.
 */
export function useLessonCoverage(chatId: string, busy: boolean) {
  const [coverage, setCoverage] = useState<LessonCoverage | null>(null);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setCoverage(await api.getLessonCoverage(chatId));
      setError(null);
    } catch (err) {
      setError(describeError(err).detail);
    }
  }, [chatId]);

  useEffect(() => {
    if (!busy) void refresh();
  }, [busy, refresh]);

  const polling = isBusy(coverage);
  useEffect(() => {
    if (!polling) return;
    const timer = window.setInterval(() => void refresh(), POLL_MS);
    return () => window.clearInterval(timer);
  }, [polling, refresh]);

  const flushAt = coverage?.pending?.flushAt ?? null;
  useEffect(() => {
    const due = flushAt ? Date.parse(flushAt) : NaN;
    if (!Number.isFinite(due)) return;
    const timer = window.setTimeout(() => void refresh(), Math.max(0, due - Date.now()) + AFTER_DUE_MS);
    return () => window.clearTimeout(timer);
  }, [flushAt, refresh]);

  return { coverage, setCoverage, error, refresh };
}
