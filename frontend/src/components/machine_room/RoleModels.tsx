import { useEffect, useState } from 'react';
import * as api from '../../api';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import { NOT_SET, modelPlaceholder, needsBaseUrl, type SlotDraft } from '../../core/machine_room/settings';
import {
  defaultLabel,
  parseModelRoles,
  rolesDraft,
  rolesDraftsEqual,
  rolesUpdate,
  runsLabel,
  validateRoles,
  type ModelRole,
  type RolesDraft,
} from '../../core/machine_room/roleModels';
import type { Settings } from '../../core/types';
import ProviderSelect from './ProviderSelect';
import { SettingsActions } from './SettingsLoad';
import './roleModels.css';

/**
 * Settings: the model of each job (issue 30 item 2, seed §7). Every model-using role once, with
 * its default (a slot, or each lesson's own model) and what it runs now; "Default" or a provider
 * and model id overrides it (PUT /api/settings/roles, every role at once).
 */
export default function RoleModels({ settings }: { settings: Settings }) {
  const { setSettings } = useAppState();
  const roles = parseModelRoles(settings);
  const [saved, setSaved] = useState<RolesDraft>(() => rolesDraft(roles));
  const [draft, setDraft] = useState<RolesDraft>(saved);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const dirty = !rolesDraftsEqual(draft, saved);

  // adopt changes made elsewhere while nothing is being edited
  useEffect(() => {
    const fresh = rolesDraft(parseModelRoles(settings));
    if (!dirty && !rolesDraftsEqual(fresh, saved)) {
      setSaved(fresh);
      setDraft(fresh);
    }
  }, [settings]);

  if (roles.length === 0) return null; // a server without per-role models

  function update(role: string, patch: Partial<SlotDraft>) {
    setDraft((d) => ({ ...d, [role]: { ...(d[role] ?? { provider: NOT_SET, model: '', baseUrl: '' }), ...patch } }));
    setNotice(null);
  }

  async function save() {
    const problems = validateRoles(draft, roles);
    if (problems.length) {
      setError(problems.join(' '));
      return;
    }
    setSaving(true);
    setError(null);
    setNotice(null);
    try {
      const next = await api.putRoles(rolesUpdate(draft));
      setSettings(next);
      const fresh = rolesDraft(parseModelRoles(next));
      setSaved(fresh);
      setDraft(fresh);
      setNotice('Saved.');
    } catch (err) {
      setError(describeError(err).detail);
    } finally {
      setSaving(false);
    }
  }

  const overridden = roles.filter((r) => r.override).length;

  return (
    <section className="card role-models" data-testid="role-models">
      <h2>Model for each job</h2>
      <p className="muted">
        Every job that uses a model runs its default unless you choose another model for it here.
        {overridden > 0 && ` ${overridden} of ${roles.length} jobs have their own model.`}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <ul className="role-list">
          {roles.map((role) => (
            <RoleRow
              key={role.role}
              role={role}
              draft={draft[role.role] ?? { provider: NOT_SET, model: '', baseUrl: '' }}
              providers={settings.providers}
              onChange={(patch) => update(role.role, patch)}
            />
          ))}
        </ul>
        <SettingsActions
          testId="role-models"
          error={error}
          notice={notice}
          saving={saving}
          dirty={dirty}
          onDiscard={() => {
            setDraft(saved);
            setError(null);
          }}
        />
      </form>
    </section>
  );
}

interface RowProps {
  role: ModelRole;
  draft: SlotDraft;
  providers: readonly string[] | null | undefined;
  onChange: (patch: Partial<SlotDraft>) => void;
}

function RoleRow({ role, draft, providers, onChange }: RowProps) {
  const own = draft.provider !== NOT_SET;
  const id = `role-${role.role}`;
  return (
    <li className="role-row" data-testid={id}>
      <div className="role-head">
        <strong id={`${id}-label`}>{role.label}</strong>
        <span className="muted small">{role.does}</span>
      </div>
      <div className="role-fields">
        <ProviderSelect
          data-testid={`${id}-provider`}
          aria-label={`${role.label}: provider`}
          value={draft.provider}
          onChange={(provider) => onChange({ provider })}
          providers={providers}
          allowNotSet
          notSetLabel={defaultLabel(role)}
        />
        {own && (
          <input
            type="text"
            data-testid={`${id}-model`}
            aria-label={`${role.label}: model id`}
            value={draft.model}
            placeholder={modelPlaceholder(draft.provider)}
            spellCheck={false}
            autoComplete="off"
            onChange={(e) => onChange({ model: e.target.value })}
          />
        )}
        {own && needsBaseUrl(draft.provider) && (
          <input
            type="url"
            data-testid={`${id}-baseurl`}
            aria-label={`${role.label}: base URL`}
            value={draft.baseUrl}
            placeholder="http://localhost:1234/v1"
            spellCheck={false}
            autoComplete="off"
            onChange={(e) => onChange({ baseUrl: e.target.value })}
          />
        )}
      </div>
      <p className={`small resolved${role.problem ? ' error-text' : ''}`} data-testid={`${id}-runs`}>
        {runsLabel(role)}
      </p>
    </li>
  );
}
