import './sessionModel.css';
import { useState, type FormEvent } from 'react';
import * as api from '../../api';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import { DEMO_NOT_CHOSEN, needsDemoConfirm } from '../../core/machine_room/demo';
import { modelPlaceholder, needsBaseUrl, providerLabel, providerOptions } from '../../core/machine_room/settings';
import type { ChatModel } from '../../core/types';
import ProviderSelect from '../machine_room/ProviderSelect';

interface Props {
  chatId: string;
  model: ChatModel | null;
  busy: boolean;
  onChanged: (model: ChatModel | null) => void;
}

/**
 * The session's own model ("provider · model") and a small form to change it. A switch to the
 * offline demo model is sent only after a plain confirmation that it gets facts wrong (`demo: true`
 * in PUT /api/chats/{id}/settings; a 409 demo_not_chosen shows the same confirmation).
 */
export default function SessionModel({ chatId, model, busy, onChanged }: Props) {
  const { settings } = useAppState();
  const [editing, setEditing] = useState(false);
  const [provider, setProvider] = useState('');
  const [modelId, setModelId] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [confirmDemo, setConfirmDemo] = useState(false);

  function open() {
    setProvider(model?.provider ?? providerOptions(settings?.providers)[0] ?? '');
    setModelId(model?.model ?? '');
    setBaseUrl(model?.baseUrl ?? '');
    setError(null);
    setConfirmDemo(false);
    setEditing(true);
  }

  function choose(next: string) {
    setProvider(next);
    setConfirmDemo(false);
  }

  async function save(e: FormEvent | null, demo = false) {
    e?.preventDefault();
    if (!modelId.trim()) {
      setError('Enter a model id.');
      return;
    }
    if (!demo && needsDemoConfirm(model?.provider, provider)) {
      setError(null);
      setConfirmDemo(true);
      return;
    }
    setSaving(true);
    setError(null);
    try {
      const ref = needsBaseUrl(provider)
        ? { provider, model: modelId.trim(), baseUrl: baseUrl.trim() || null }
        : { provider, model: modelId.trim() };
      const record = await api.setChatModel(chatId, ref, demo);
      onChanged(record.model);
      setConfirmDemo(false);
      setEditing(false);
    } catch (err) {
      const { code, detail } = describeError(err);
      if (code === DEMO_NOT_CHOSEN) setConfirmDemo(true);
      else setError(detail);
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
            <ProviderSelect data-testid="session-model-provider" value={provider} onChange={choose} providers={settings?.providers} />
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
          {!confirmDemo && (
            <>
              <button type="submit" className="btn btn-small btn-primary" data-testid="session-model-save" disabled={saving || busy}>
                {saving ? 'Saving…' : 'Save'}
              </button>
              <button type="button" className="btn btn-small" onClick={() => setEditing(false)}>
                Cancel
              </button>
            </>
          )}
          {confirmDemo && (
            <div className="session-model-demo" role="alert" data-testid="session-model-demo-confirm">
              <p>
                <strong>The offline demo model gets facts wrong.</strong> Its explanations and the answers it marks as right
                may be false: do not learn from it. It is slow on most computers.
              </p>
              <button
                type="button"
                className="btn btn-small"
                data-testid="session-model-demo-yes"
                disabled={saving || busy}
                onClick={() => void save(null, true)}
              >
                {saving ? 'Saving…' : 'Use the demo model anyway'}
              </button>
              <button type="button" className="btn btn-small btn-primary" data-testid="session-model-demo-no" onClick={() => setConfirmDemo(false)}>
                Pick another model
              </button>
            </div>
          )}
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
