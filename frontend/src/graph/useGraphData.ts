import { useCallback, useEffect, useRef, useState } from 'react';
import * as api from '../api';
import { useActivity } from '../activityState';
import { describeError } from '../core/errors';
import { DEFAULT_RENDER, type GraphData, type RenderSettings } from '../core/graph';
import type { GraphSource } from '../core/imports';

/** While extractions run, the graph is read again this often (small graphs only). */
const RUNNING_REFRESH_MS = 4000;
const LIVE_REFRESH_MAX_NODES = 5000;

export interface GraphDataState {
  data: GraphData | null;
  /** Every source of the graph (lessons and notes files) with its title, for the node card. */
  sources: GraphSource[];
  error: string | null;
  refresh: () => Promise<void>;
  settings: RenderSettings;
  saveSettings: (update: Partial<RenderSettings>) => Promise<void>;
  settingsError: string | null;
}

/**
 * The graph view (GET /api/graph) and the render settings. Read on mount, when the tab comes
 * back, when a background job ends, and every few seconds while jobs run (so imports grow the
 * graph in place).
 */
export function useGraphData(): GraphDataState {
  const [data, setData] = useState<GraphData | null>(null);
  const [sources, setSources] = useState<GraphSource[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [settings, setSettings] = useState<RenderSettings>(DEFAULT_RENDER);
  const [settingsError, setSettingsError] = useState<string | null>(null);
  const seq = useRef(0);
  const size = useRef(0);
  const { runningCount } = useActivity();

  const refresh = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const [next, named] = await Promise.all([api.getGraph(), api.getGraphSources().catch(() => null)]);
      if (mine !== seq.current) return;
      if (named) setSources(named);
      size.current = next.nodes.length;
      setData(next);
      setError(null);
    } catch (err) {
      if (mine === seq.current) setError(describeError(err).detail);
    }
  }, []);

  useEffect(() => {
    void refresh();
    api
      .getRenderSettings()
      .then(setSettings)
      .catch(() => {
        // defaults stay; saving later reports a problem if there is one
      });
    const onVisible = () => {
      if (document.visibilityState === 'visible') void refresh();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, [refresh]);

  // A job that ends may have grown the graph; while jobs run, look now and then.
  const lastRunning = useRef(runningCount);
  useEffect(() => {
    const before = lastRunning.current;
    lastRunning.current = runningCount;
    if (runningCount < before) void refresh();
    if (runningCount === 0) return;
    const timer = window.setInterval(() => {
      if (document.visibilityState === 'visible' && size.current <= LIVE_REFRESH_MAX_NODES) void refresh();
    }, RUNNING_REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [runningCount, refresh]);

  const saveSettings = useCallback(async (update: Partial<RenderSettings>) => {
    setSettings((s) => ({ ...s, ...update }));
    try {
      setSettings(await api.putRenderSettings(update));
      setSettingsError(null);
    } catch (err) {
      setSettingsError(describeError(err).detail);
    }
  }, []);

  return { data, sources, error, refresh, settings, saveSettings, settingsError };
}
