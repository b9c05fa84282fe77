import './settingsPage.css';
import { useEffect, useRef, useState } from 'react';
import * as api from '../../api';
import './librarySettings.css';
import BackupSettings from './BackupSettings';
import TrashSettings from './TrashSettings';
import ResearchSection from './ResearchSettings';
import { SettingsActions, SettingsLoading, useSettingsLoad } from './SettingsLoad';
import { useDraftSave } from './useDraftSave';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import {
  NOT_SET,
  draftFromSettings,
  draftToUpdate,
  draftsEqual,
  keySourceLabel,
  modelPlaceholder,
  needsBaseUrl,
  providerLabel,
  resolvedLabel,
  validateDraft,
  type SettingsDraft,
  type SlotDraft,
} from '../../core/machine_room/settings';
import {
  CHUNK_TOKENS_MAX,
  CHUNK_TOKENS_MIN,
  IDLE_MINUTES_MAX,
  IDLE_MINUTES_MIN,
  libraryDraft,
  libraryDraftsEqual,
  libraryUpdate,
  type LibraryDraft,
} from '../../core/machine_room/librarySettings';
import { KEY_PROVIDERS, SLOTS, type Settings, type Slot } from '../../core/types';
import ThemeSwitch from './ThemeSwitch';
import ProviderSelect from './ProviderSelect';
import RoleModels from './RoleModels';
import SubscriptionSettings from './SubscriptionSettings';
import {
  desktopBridge,
  keysClient,
  plainKeyError,
  presenceOf,
  useDesktopKeyStatus,
  type DesktopKeyStatus,
  type KeysClient,
} from './keysClient';

const SLOT_INFO: Record<Slot, { label: string; help: string }> = {
  strong: { label: 'Strong model', help: 'Teaches the lessons. Use the best model you can.' },
  cheap: { label: 'Cheap model', help: 'Small helper tasks such as naming lessons.' },
  vision: { label: 'Vision model', help: 'Reads images and diagrams you share.' },
};


/** The keys this section holds: model providers and the dictation service (search keys: Web research). */
const KEY_ROWS = [...KEY_PROVIDERS, 'deepgram'] as const;
type KeyRowName = (typeof KEY_ROWS)[number];

export default function SettingsPage() {
  const { settings, settingsError, refreshSettings } = useAppState();

  return (
    <div className="page page-narrow settings">
      <h1>Settings</h1>
      {!settings && !settingsError && <p className="muted">Loading…</p>}
      {!settings && settingsError && (
        <div className="banner banner-error" role="alert">
          Could not load settings: {settingsError}{' '}
          <button type="button" className="btn btn-small" onClick={() => void refreshSettings()}>
            Try again
          </button>
        </div>
      )}
      {settings && (
        <>
          <ModelsSection settings={settings} />
          <RoleModels settings={settings} />
          <SubscriptionSettings />
          <KeysSection settings={settings} />
          <LibrarySection />
          <ResearchSection />
          <BackupSettings />
          <TrashSettings />
        </>
      )}
      <ThemeSwitch />
    </div>
  );
}

// ---------------------------------------------------------------------------

function ModelsSection({ settings }: { settings: Settings }) {
  const { setSettings } = useAppState();
  // The draft starts from the server's values; background refreshes of the
  // settings do not overwrite what the user is typing.
  const [saved, setSaved] = useState<SettingsDraft>(() => draftFromSettings(settings));
  const [draft, setDraft] = useState<SettingsDraft>(saved);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const dirty = !draftsEqual(draft, saved);

  // Adopt server changes made elsewhere while nothing is being edited.
  useEffect(() => {
    const fresh = draftFromSettings(settings);
    if (!dirty && !draftsEqual(fresh, saved)) {
      setSaved(fresh);
      setDraft(fresh);
    }
  }, [settings]);

  function update(slot: Slot, patch: Partial<SlotDraft>) {
    setDraft((d) => ({ ...d, [slot]: { ...d[slot], ...patch } }));
    setNotice(null);
  }

  async function save() {
    const problems = validateDraft(draft);
    if (problems.length) {
      setError(problems.join(' '));
      return;
    }
    setSaving(true);
    setError(null);
    setNotice(null);
    try {
      const next = await api.putSettings(draftToUpdate(draft));
      setSettings(next);
      const fresh = draftFromSettings(next);
      setSaved(fresh);
      setDraft(fresh);
      setNotice('Saved.');
    } catch (err) {
      setError(describeError(err).detail);
    } finally {
      setSaving(false);
    }
  }

  return (
    <section className="card">
      <h2>Models</h2>
      <p className="muted">Choose which model does what. A model id looks like <code>anthropic/claude-sonnet-4</code> (OpenRouter) or <code>gpt-4o</code> (OpenAI).</p>

      {settings.problems?.length > 0 && (
        <ul className="problems" data-testid="settings-problems">
          {settings.problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}

      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        {SLOTS.map((slot) => {
          const d = draft[slot];
          return (
            <fieldset key={slot} className="slot" data-testid={`slot-${slot}`}>
              <legend>{SLOT_INFO[slot].label}</legend>
              <p className="muted small">{SLOT_INFO[slot].help}</p>
              <div className="slot-fields">
                <label>
                  <span>Provider</span>
                  <ProviderSelect
                    data-testid={`slot-${slot}-provider`}
                    value={d.provider}
                    onChange={(provider) => update(slot, { provider })}
                    providers={settings.providers}
                    allowNotSet
                  />
                </label>
                <label className="grow">
                  <span>Model id</span>
                  <input
                    type="text"
                    data-testid={`slot-${slot}-model`}
                    value={d.model}
                    disabled={d.provider === NOT_SET}
                    placeholder={d.provider === NOT_SET ? '' : modelPlaceholder(d.provider)}
                    spellCheck={false}
                    autoComplete="off"
                    onChange={(e) => update(slot, { model: e.target.value })}
                  />
                </label>
              </div>
              {needsBaseUrl(d.provider) && (
                <label className="block">
                  <span>Base URL</span>
                  <input
                    type="url"
                    data-testid={`slot-${slot}-baseurl`}
                    value={d.baseUrl}
                    placeholder="http://localhost:1234/v1"
                    spellCheck={false}
                    autoComplete="off"
                    onChange={(e) => update(slot, { baseUrl: e.target.value })}
                  />
                </label>
              )}
              <p className="small resolved" data-testid={`slot-${slot}-resolved`}>
                {resolvedLabel(settings, slot)}
              </p>
            </fieldset>
          );
        })}

        {error && (
          <div className="banner banner-error" role="alert" data-testid="settings-error">
            {error}
          </div>
        )}
        <div className="form-actions">
          <button type="submit" className="btn btn-primary" data-testid="settings-save" disabled={saving}>
            {saving ? 'Saving…' : 'Save'}
          </button>
          {dirty && !saving && (
            <button
              type="button"
              className="btn"
              onClick={() => {
                setDraft(saved);
                setError(null);
              }}
            >
              Discard changes
            </button>
          )}
          {notice && !dirty && (
            <span className="notice" data-testid="settings-saved">
              {notice}
            </span>
          )}
        </div>
      </form>
    </section>
  );
}

// ---------------------------------------------------------------------------

function KeysSection({ settings }: { settings: Settings }) {
  const client = keysClient(desktopBridge(), settings.keysOwner);
  const { status: desktop, error: statusError, adopt } = useDesktopKeyStatus(client);
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    // the offline banner links here (`/settings#api-keys`); the section mounts after settings load
    if (window.location.hash === '#api-keys') section.current?.scrollIntoView?.({ block: 'start' });
  }, []);
  return (
    <section className="card" id="api-keys" ref={section}>
      <h2>API keys</h2>
      <p className="muted" data-testid="keys-explainer">
        {client.owner === 'desktop'
          ? 'Keys are kept by this app, encrypted with your system keychain, and handed to the app’s server when it starts; they are never shown again. Saving or removing a key restarts the server, which takes a few seconds.'
          : 'Keys are kept in your operating system’s keychain (or, if there is none, an owner-only file) and are never written to the settings file or shown again.'}
      </p>
      {desktop?.problem && (
        <div className="banner banner-error" role="alert" data-testid="keys-problem">
          {desktop.problem}
        </div>
      )}
      {desktop?.storage === 'unavailable' && (
        <div className="banner banner-error" role="alert" data-testid="keys-storage-unavailable">
          This computer has no system keychain the app can use to encrypt keys, so it cannot store them. Set them as environment variables
          (for example LH_OPENROUTER_API_KEY) before starting the app.
        </div>
      )}
      {statusError && (
        <p className="error-text" role="alert" data-testid="keys-status-error">
          Could not read which keys are stored: {statusError}
        </p>
      )}
      {KEY_ROWS.map((p) => (
        <KeyRow key={p} provider={p} settings={settings} client={client} desktop={desktop} onDesktop={adopt} />
      ))}
    </section>
  );
}

interface KeyRowProps {
  provider: KeyRowName;
  settings: Settings;
  client: KeysClient;
  /** The shell's key status in the desktop app (null in web mode). */
  desktop: DesktopKeyStatus | null;
  onDesktop: (status: DesktopKeyStatus | null) => void;
}

function KeyRow({ provider, settings, client, desktop, onDesktop }: KeyRowProps) {
  const { setSettings, refreshSettings } = useAppState();
  const status = presenceOf(provider, desktop, settings.keys?.[provider]);
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function run(action: () => Promise<void>, done: string) {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await action();
      setNotice(done);
      // Key changes can change what resolves (and the banner).
      try {
        setSettings(await api.getSettings());
      } catch {
        void refreshSettings();
      }
    } catch (err) {
      setError(plainKeyError(err));
    } finally {
      setBusy(false);
    }
  }

  const store = () =>
    run(async () => {
      onDesktop(await client.setKey(provider, value));
      setValue('');
    }, 'Key stored.');

  const remove = () => run(async () => onDesktop(await client.deleteKey(provider)), 'Key removed.');

  const source = keySourceLabel(status.source);

  return (
    <div className="key-row" data-testid={`key-${provider}`}>
      <div className="key-head">
        <strong>{providerLabel(provider)}</strong>
        <span className={status.set ? 'key-status set' : 'key-status'} data-testid={`key-${provider}-status`}>
          {status.set ? `Key set${source ? ` (${source})` : ''}` : 'No key'}
        </span>
      </div>
      <form
        className="key-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) void store();
        }}
      >
        <input
          type="password"
          data-testid={`key-${provider}-input`}
          aria-label={`${providerLabel(provider)} API key`}
          placeholder={status.set ? 'Enter a new key to replace it' : 'Paste your API key'}
          autoComplete="off"
          spellCheck={false}
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
        <button type="submit" className="btn btn-primary" data-testid={`key-${provider}-store`} disabled={busy || !value.trim()}>
          {busy && client.owner === 'desktop' ? 'Saving… (restarting the server)' : 'Store key'}
        </button>
        <button type="button" className="btn" data-testid={`key-${provider}-remove`} disabled={busy || !status.set} onClick={() => void remove()}>
          Remove
        </button>
      </form>
      {status.set && status.source === 'env' && (
        <p className="muted small">This key comes from an environment variable; removing a stored key does not unset it.</p>
      )}
      {error && (
        <p className="error-text" role="alert" data-testid={`key-${provider}-error`}>
          {error}
        </p>
      )}
      {notice && <p className="notice small">{notice}</p>}
    </div>
  );
}

// ---------------------------------------------------------------------------

/** When lessons are read into the knowledge graph, and whether the teacher may look at it. */
function LibrarySection() {
  const [saved, setSaved] = useState<LibraryDraft | null>(null);
  const [draft, setDraft] = useState<LibraryDraft | null>(null);
  const { loadError, retry } = useSettingsLoad(api.getLibrarySettings, (s) => {
    setSaved(libraryDraft(s));
    setDraft(libraryDraft(s));
  });
  const { saving, error, notice, edit, save } = useDraftSave(draft, setDraft, libraryUpdate, api.putLibrarySettings, (s) => {
    const next = libraryDraft(s);
    setSaved(next);
    setDraft(next);
  });

  if (!draft || !saved) {
    return <SettingsLoading title="Knowledge graph" testId="library-settings" loadError={loadError} retry={retry} />;
  }

  const dirty = !libraryDraftsEqual(draft, saved);

  return (
    <section className="card" data-testid="library-settings">
      <h2>Knowledge graph</h2>
      <p className="muted">
        What a lesson teaches is read into your graph when you leave the lesson, after some time without a turn, when you choose “Add to my
        graph now” in the lesson’s menu, or at once when enough is new.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="block">
          <span>Read a lesson at once after this much new teaching (tokens; also the size of each reading job)</span>
          <input
            type="number"
            data-testid="library-chunk-tokens"
            min={CHUNK_TOKENS_MIN}
            max={CHUNK_TOKENS_MAX}
            step={1}
            value={draft.chunkTokens}
            onChange={(e) => edit({ chunkTokens: e.target.value })}
          />
        </label>
        <label className="block">
          <span>Read a lesson after this many minutes without a turn</span>
          <input
            type="number"
            data-testid="library-idle-minutes"
            min={IDLE_MINUTES_MIN}
            max={IDLE_MINUTES_MAX}
            step="any"
            value={draft.idleMinutes}
            onChange={(e) => edit({ idleMinutes: e.target.value })}
          />
        </label>
        <label className="checkbox">
          <input type="checkbox" data-testid="library-graph-enabled" checked={draft.graphEnabled} onChange={(e) => edit({ graphEnabled: e.target.checked })} />
          <span>Use your knowledge graph in lessons</span>
        </label>
        <label className="checkbox">
          <input
            type="checkbox"
            data-testid="library-graph-tools"
            checked={draft.graphTools}
            disabled={!draft.graphEnabled}
            onChange={(e) => edit({ graphTools: e.target.checked })}
          />
          <span>
            The teacher may look at your graph (which lessons and notes it holds, and what they taught)
            {!draft.graphEnabled && ' — off while the graph is not used in lessons'}
          </span>
        </label>
        <SettingsActions testId="library-settings" error={error} notice={notice} saving={saving} dirty={dirty} onDiscard={() => setDraft(saved)} />
      </form>
    </section>
  );
}
