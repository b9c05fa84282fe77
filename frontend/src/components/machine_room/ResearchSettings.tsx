import { useState } from 'react';
import * as api from '../../api';
import {
  SEARCH_PROVIDERS,
  SEARCH_PROVIDER_LABEL,
  researchDraft,
  researchDraftsEqual,
  researchStatus,
  researchUpdate,
  type ResearchDraft,
  type ResearchSettings,
  type SearchProvider,
} from '../../core/machine_room/research';
import { SettingsActions, SettingsLoading, useSettingsLoad } from './SettingsLoad';
import { useDraftSave } from './useDraftSave';
import { desktopBridge, keysClient, plainKeyError, presenceOf, useDesktopKeyStatus } from './keysClient';
import './researchSettings.css';

/** Settings: which web search provider the teacher's researcher uses (none: no research tool). */
export default function ResearchSection() {
  const [settings, setSettings] = useState<ResearchSettings | null>(null);
  const [draft, setDraft] = useState<ResearchDraft | null>(null);
  const { loadError, retry } = useSettingsLoad(api.getResearchSettings, (s) => {
    setSettings(s);
    setDraft(researchDraft(s));
  });

  if (!settings || !draft) {
    return <SettingsLoading title="Web research" testId="research-settings" loadError={loadError} retry={retry} />;
  }

  return (
    <ResearchForm
      settings={settings}
      draft={draft}
      onDraft={setDraft}
      onSaved={(s) => {
        setSettings(s);
        setDraft(researchDraft(s));
      }}
      onKeys={(s) => setSettings(s)}
    />
  );
}

interface FormProps {
  settings: ResearchSettings;
  draft: ResearchDraft;
  onDraft: (draft: ResearchDraft) => void;
  /** The settings as saved (the draft starts over from them). */
  onSaved: (settings: ResearchSettings) => void;
  /** The settings re-read after a key change (the draft is kept). */
  onKeys: (settings: ResearchSettings) => void;
}

export function ResearchForm({ settings, draft, onDraft, onSaved, onKeys }: FormProps) {
  const { saving, error, notice, edit, save } = useDraftSave(draft, onDraft, researchUpdate, api.putResearchSettings, onSaved);
  const saved = researchDraft(settings);
  const dirty = !researchDraftsEqual(draft, saved);

  const provider = draft.provider;
  return (
    <section className="card" data-testid="research-settings">
      <h2>Web research</h2>
      <p className="muted">
        The teacher can send a background researcher to search the web and come back with a cited summary. Choose the search service
        it uses; with no provider, the teacher is not offered the research tool at all.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="block">
          <span>Search provider</span>
          <select data-testid="research-provider" value={provider} onChange={(e) => edit({ provider: e.target.value as SearchProvider | '' })}>
            <option value="">None (no web research)</option>
            {SEARCH_PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {SEARCH_PROVIDER_LABEL[p]}
              </option>
            ))}
          </select>
        </label>
        {provider === 'google' && (
          <label className="block">
            <span>Search engine id (cx) of your Programmable Search engine</span>
            <input
              type="text"
              data-testid="research-google-cx"
              value={draft.googleCx}
              spellCheck={false}
              autoComplete="off"
              onChange={(e) => edit({ googleCx: e.target.value })}
            />
          </label>
        )}
        {provider && (
          <label className="block">
            <span>Base URL (optional: a proxy in front of the provider&apos;s API)</span>
            <input
              type="url"
              data-testid="research-base-url"
              value={draft.baseUrl}
              placeholder="leave empty for the provider's own address"
              spellCheck={false}
              autoComplete="off"
              onChange={(e) => edit({ baseUrl: e.target.value })}
            />
          </label>
        )}
        <SettingsActions testId="research-settings" error={error} notice={notice} saving={saving} dirty={dirty} onDiscard={() => onDraft(saved)} />
      </form>
      {provider && <SearchKeyRow key={provider} provider={provider} stored={settings.keys[provider]} onKeys={onKeys} />}
      <p className="research-status" data-testid="research-status">
        {researchStatus(settings)}
      </p>
    </section>
  );
}

/** The chosen provider's key, never shown again: kept by the desktop app's shell (window.lhDesktop)
 * or, in a browser, stored with PUT /api/keys/{provider} (src/keysClient.ts). */
function SearchKeyRow({ provider, stored: serverStored, onKeys }: { provider: SearchProvider; stored: boolean; onKeys: (settings: ResearchSettings) => void }) {
  const client = keysClient(desktopBridge());
  const { status: desktop, adopt } = useDesktopKeyStatus(client);
  const stored = presenceOf(provider, desktop, serverStored).set;
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const label = SEARCH_PROVIDER_LABEL[provider];

  async function run(action: () => Promise<void>, done: string) {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await action();
      setNotice(done);
      onKeys(await api.getResearchSettings());
    } catch (err) {
      setError(plainKeyError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="key-row" data-testid={`research-key-${provider}`}>
      <div className="key-head">
        <strong>{label} key</strong>
        <span className={stored ? 'key-status set' : 'key-status'} data-testid="research-key-status">
          {stored ? 'key stored' : 'No key'}
        </span>
      </div>
      <form
        className="key-form"
        onSubmit={(e) => {
          e.preventDefault();
          const key = value.trim();
          if (key)
            void run(async () => {
              adopt(await client.setKey(provider, key));
              setValue('');
            }, 'Key stored.');
        }}
      >
        <input
          type="password"
          data-testid="research-key-input"
          aria-label={`${label} API key`}
          placeholder={stored ? 'Enter a new key to replace it' : 'Paste your API key'}
          autoComplete="off"
          spellCheck={false}
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
        <button type="submit" className="btn btn-primary" data-testid="research-key-store" disabled={busy || !value.trim()}>
          Store key
        </button>
        <button
          type="button"
          className="btn"
          data-testid="research-key-remove"
          disabled={busy || !stored}
          onClick={() => void run(async () => adopt(await client.deleteKey(provider)), 'Key removed.')}
        >
          Remove
        </button>
      </form>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {notice && <p className="notice small">{notice}</p>}
    </div>
  );
}
