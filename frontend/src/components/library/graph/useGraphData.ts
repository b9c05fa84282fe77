import { useCallback, useEffect, useRef, useState } from 'react';
import * as api from '../../../api';
import { describeError } from '../../../core/errors';
import { DEFAULT_RENDER, type CompactGraph, type GraphData, type RenderSettings } from '../../../core/library/graph';
import type { GraphSource } from '../../../core/library/imports';
import { useServerEvents } from '../../../serverEvents';


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
 * The graph view (GET /api/graph) and the render settings. Read on mount, then on every
 * `graph-changed` (a merge, a retirement, a deletion: imports grow the graph in place) and every
 * (re)connect of the events channel, one read per ~250 ms window. Reads are compact, and after
 * the first only what changed since the view held (`api.getGraphSince`, issue 17 item 5).
 */
export function useGraphData(): GraphDataState {
  const [data, setData] = useState<GraphData | null>(null);
  const [sources, setSources] = useState<GraphSource[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [settings, setSettings] = useState<RenderSettings>(DEFAULT_RENDER);
  const [settingsError, setSettingsError] = useState<string | null>(null);
  const seq = useRef(0);
  /** The compact view last shown, at its version: the next read asks only what changed since. */
  const held = useRef<CompactGraph | null>(null);

  const refresh = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const [next, named] = await Promise.all([api.getGraphSince(held.current), api.getGraphSources().catch(() => null)]);
      if (mine !== seq.current) return;
      // the same sources again keep the held list (no re-render of the page for a refresh that
      // changed nothing, issue 17)
      if (named) setSources((was) => (JSON.stringify(was) === JSON.stringify(named) ? was : named));
      held.current = next.version === null ? null : next;
      setData(next.data);
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

  useServerEvents(['graph-changed'], () => void refresh());

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
