import { useCallback, useEffect, useState } from 'react';
import * as api from '../../api';
import { describeError } from '../../core/errors';
import { mentions } from '../../core/events';
import type { LessonCoverage } from '../../core/classroom/lessonGraph';
import { useServerEvents } from '../../serverEvents';

/**
 * A lesson's coverage (GET /api/chats/{id}/coverage): read on open, whenever this lesson's turn
 * settles (a settled turn may start its reading or arm its idle trigger), and on every
 * `activity-changed` (its reading's jobs move, its idle trigger fires), one read per ~250 ms
 * window, and on every (re)connect of the events channel.
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

  useServerEvents(['activity-changed', 'turn-settled'], (events) => {
    if (events.some((e) => e.name === 'activity-changed') || mentions(events, chatId)) void refresh();
  });

  return { coverage, setCoverage, error, refresh };
}
