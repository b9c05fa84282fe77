import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router-dom';
import * as api from './api';
import { describeError } from './core/errors';
import { DEMO_NOT_CHOSEN, DEMO_ROUTE } from './core/machine_room/demo';
import { bannerFor } from './core/machine_room/settings';
import type { ChatSummary, Settings } from './core/types';
import { useServerEvents } from './serverEvents';

// App-wide state: the session list and the settings (for the banner). The list follows the
// events channel: a session created, renamed or deleted (chats-changed), a turn started or
// settled anywhere (turn-*: the running dots, the order), and every (re)connect.

interface AppState {
  chats: ChatSummary[] | null;
  chatsError: string | null;
  refreshChats: () => Promise<void>;
  settings: Settings | null;
  settingsError: string | null;
  refreshSettings: () => Promise<void>;
  setSettings: (s: Settings) => void;
}

const AppStateContext = createContext<AppState | null>(null);

export function AppStateProvider({ children }: { children: ReactNode }) {
  const [chats, setChats] = useState<ChatSummary[] | null>(null);
  const [chatsError, setChatsError] = useState<string | null>(null);
  const [settings, setSettingsState] = useState<Settings | null>(null);
  const [settingsError, setSettingsError] = useState<string | null>(null);
  // Ignore answers that arrive after a newer request was started.
  const chatsSeq = useRef(0);
  const settingsSeq = useRef(0);

  const refreshChats = useCallback(async () => {
    const seq = ++chatsSeq.current;
    try {
      const list = await api.listChats();
      if (seq !== chatsSeq.current) return;
      setChats(list);
      setChatsError(null);
    } catch (err) {
      if (seq !== chatsSeq.current) return;
      setChatsError(describeError(err).detail);
    }
  }, []);

  const refreshSettings = useCallback(async () => {
    const seq = ++settingsSeq.current;
    try {
      const s = await api.getSettings();
      if (seq !== settingsSeq.current) return;
      setSettingsState(s);
      setSettingsError(null);
    } catch (err) {
      if (seq !== settingsSeq.current) return;
      setSettingsError(describeError(err).detail);
    }
  }, []);

  const setSettings = useCallback((s: Settings) => {
    settingsSeq.current++;
    setSettingsState(s);
    setSettingsError(null);
  }, []);

  useEffect(() => {
    void refreshChats();
    void refreshSettings();
  }, [refreshChats, refreshSettings]);

  // Other windows and the server change the list too. The open session compares its row to
  // what it shows (useLessonChat), so a turn started elsewhere is followed from here.
  useServerEvents(['chats-changed', 'turn-started', 'turn-settled'], () => void refreshChats());
  // the banner follows the offline model: a turn that ended may have crashed or restarted it
  useServerEvents(['turn-settled'], () => void refreshSettings());

  const value = useMemo(
    () => ({ chats, chatsError, refreshChats, settings, settingsError, refreshSettings, setSettings }),
    [chats, chatsError, refreshChats, settings, settingsError, refreshSettings, setSettings],
  );
  return <AppStateContext.Provider value={value}>{children}</AppStateContext.Provider>;
}

export function useAppState(): AppState {
  const ctx = useContext(AppStateContext);
  if (!ctx) throw new Error('useAppState must be used inside <AppStateProvider>');
  return ctx;
}

/** "New lesson": POST /api/chats, refresh the list, go to /chat/<id>. When lessons would run on the
 * offline demo model, it leads to the demo screen first (`DEMO_ROUTE`), which calls
 * `create({ demo: true })` once the learner chose the demo (issue 29, item 3). */
export function useCreateLesson() {
  const { refreshChats, settings } = useAppState();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { pathname } = useLocation();

  // A failed "New lesson" message is stale once the user goes elsewhere.
  useEffect(() => {
    setError(null);
  }, [pathname]);

  const onDemo = bannerFor(settings)?.kind === 'offline';
  const create = useCallback(
    async ({ demo = false }: { demo?: boolean } = {}) => {
      if (onDemo && !demo) {
        navigate(DEMO_ROUTE);
        return;
      }
      setCreating(true);
      setError(null);
      try {
        const record = await api.createChat(undefined, demo);
        void refreshChats();
        navigate(`/chat/${encodeURIComponent(record.id)}`);
      } catch (err) {
        const { code, detail } = describeError(err);
        if (code === DEMO_NOT_CHOSEN) navigate(DEMO_ROUTE);
        else setError(detail);
      } finally {
        setCreating(false);
      }
    },
    [navigate, refreshChats, onDemo],
  );

  return { create, creating, error, clearError: () => setError(null) };
}
