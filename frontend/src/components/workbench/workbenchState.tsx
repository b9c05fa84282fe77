import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import * as api from '../../api';
import { mentions } from '../../core/events';
import { artifactIndex, type ArtifactIndex, type JobRecord, type MessageLike } from '../../core/workbench/workbench';
import { useServerEvents } from '../../serverEvents';

// A lesson's background jobs (GET /api/chats/{id}/jobs), for the transcript's dispatch cards, and
// where each job's artifact sits in the transcript. The jobs are read when the lesson opens, on
// every `jobs-changed` for this lesson and on every (re)connect of the events channel.

export interface WorkbenchView {
  jobsByToolCall: ReadonlyMap<string, JobRecord>;
  jobsById: ReadonlyMap<string, JobRecord>;
  artifacts: ArtifactIndex;
}

const EMPTY: WorkbenchView = { jobsByToolCall: new Map(), jobsById: new Map(), artifacts: { byJob: new Map(), byToolCall: new Map() } };

const WorkbenchContext = createContext<WorkbenchView>(EMPTY);

/** The lesson's jobs, newest read; null until the first answer (and [] when they cannot be read). */
export function useLessonJobs(chatId: string): JobRecord[] | null {
  const [jobs, setJobs] = useState<JobRecord[] | null>(null);
  const seq = useRef(0);

  const refresh = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const next = await api.getJobs(chatId);
      if (mine === seq.current) setJobs(next);
    } catch {
      // No jobs to show (an older server, a lesson just deleted): the cards fall back to the transcript.
      if (mine === seq.current) setJobs((current) => current ?? []);
    }
  }, [chatId]);

  useEffect(() => {
    setJobs(null);
    void refresh();
    return () => {
      seq.current += 1; // an answer for the lesson we left is dropped
    };
  }, [refresh]);

  useServerEvents(['jobs-changed'], (events) => {
    if (mentions(events, chatId)) void refresh();
  });

  return jobs;
}

export function WorkbenchProvider({ jobs, messages, children }: { jobs: readonly JobRecord[] | null; messages: readonly MessageLike[]; children: ReactNode }) {
  const artifacts = useMemo(() => artifactIndex(messages), [messages]);
  const value = useMemo<WorkbenchView>(() => {
    const jobsByToolCall = new Map<string, JobRecord>();
    const jobsById = new Map<string, JobRecord>();
    for (const job of jobs ?? []) {
      jobsById.set(job.id, job);
      if (job.toolCallId) jobsByToolCall.set(job.toolCallId, job);
    }
    return { jobsByToolCall, jobsById, artifacts };
  }, [jobs, artifacts]);
  return <WorkbenchContext.Provider value={value}>{children}</WorkbenchContext.Provider>;
}

/** The lesson's jobs and artifacts (empty outside a lesson). */
export function useWorkbench(): WorkbenchView {
  return useContext(WorkbenchContext);
}
