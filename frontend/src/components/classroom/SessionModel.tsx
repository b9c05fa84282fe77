import './sessionModel.css';
import { useState, type FormEvent } from 'react';
import * as api from '../../api';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import { modelPlaceholder, needsBaseUrl, providerLabel, providerOptions } from '../../core/machine_room/settings';
import type { ChatModel } from '../../core/types';
import ProviderSelect from '../machine_room/ProviderSelect';

interface Props {
  chatId: string;
  model: ChatModel | null;
  busy: boolean;
  onChanged: (model: ChatModel | null) => void;
}

/** The session's own model ("provider · model") and a small form to change it. */
export default function SessionModel({ chatId, model, busy, onChanged }: Props) {
  const { settings } = useAppState();
  const [editing, setEditing] = useState(false);
  const [provider, setProvider] = useState('');
  const [modelId, setModelId] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);

  function open() {
    setProvider(model?.provider ?? providerOptions(settings?.providers)[0] ?? '');
    setModelId(model?.model ?? '');
    setBaseUrl(model?.baseUrl ?? '');
    setError(null);
    setEditing(true);
  }

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!modelId.trim()) {
      setError('Enter a model id.');
      return;
    }
    setSaving(true);
    setError(null);
    try {
      const ref = needsBaseUrl(provider)
        ? { provider, model: modelId.trim(), baseUrl: baseUrl.trim() || null }
        : { provider, model: modelId.trim() };
      const record = await api.setChatModel(chatId, ref);
      onChanged(record.model);
      setEditing(false);
    } catch (err) {
      setError(describeError(err).detail);
    } finally {
      setSaving(false);
    }
  }

  return (
    <div className="session-model">
      <span className="session-model-label" data-testid="session-model" title={model?.baseUrl ?? undefined}>
        {model ? `${providerLabel(model.provider)} · ${model.model}` : 'no model'}
      </span>
      {!editing && (
        <button type="button" className="link-btn" data-testid="session-model-edit" onClick={open}>
          Change
        </button>
      )}
      {editing && (
        <form className="session-model-form" onSubmit={(e) => void save(e)} data-testid="session-model-form">
          <label className="session-model-field">
            <span>Provider</span>
            <ProviderSelect data-testid="session-model-provider" value={provider} onChange={setProvider} providers={settings?.providers} />
          </label>
          <label className="session-model-field">
            <span>Model id</span>
            <input
              type="text"
              data-testid="session-model-model"
              placeholder={modelPlaceholder(provider).replace(/ \(connect the subscription below\)$/, '') || 'model id'}
              spellCheck={false}
              autoComplete="off"
              value={modelId}
              onChange={(e) => setModelId(e.target.value)}
            />
          </label>
          {needsBaseUrl(provider) && (
            <label className="session-model-field">
              <span>Base URL</span>
              <input
                type="url"
                data-testid="session-model-baseurl"
                placeholder="http://127.0.0.1:11434/v1"
                spellCheck={false}
                autoComplete="off"
                value={baseUrl}
                onChange={(e) => setBaseUrl(e.target.value)}
              />
            </label>
          )}
          <button type="submit" className="btn btn-small btn-primary" data-testid="session-model-save" disabled={saving || busy}>
            {saving ? 'Saving…' : 'Save'}
          </button>
          <button type="button" className="btn btn-small" onClick={() => setEditing(false)}>
            Cancel
          </button>
          {busy && <span className="muted small">Change it when the reply is done.</span>}
          {error && (
            <span className="error-text small" role="alert" data-testid="session-model-error">
              {error}
            </span>
          )}
        </form>
      )}
    </div>
  );
}
