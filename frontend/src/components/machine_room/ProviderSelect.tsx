import { NOT_SET, providerLabel, providerOptions } from '../../core/machine_room/settings';

interface Props {
  /** The chosen provider id; NOT_SET ('') for "not set" (offered only with `allowNotSet`). */
  value: string;
  onChange: (provider: string) => void;
  /** The server's provider ids (GET /api/settings `providers`); the fallback list when missing. */
  providers: readonly string[] | null | undefined;
  /** Offer "Not set" first (a Settings slot may be left unconfigured). */
  allowNotSet?: boolean;
  /** The words of that first choice ("Not set" unless given, e.g. "Default: the Strong model"). */
  notSetLabel?: string;
  disabled?: boolean;
  'data-testid'?: string;
  'aria-label'?: string;
}

/**
 * The one provider picker (Settings' model slots, a lesson's own model, the first screen): every
 * provider in plain words (providerLabel), the current one kept even when the server no longer
 * lists it (providerOptions), values are the provider ids the server takes.
 */
export default function ProviderSelect({ value, onChange, providers, allowNotSet = false, notSetLabel = 'Not set', disabled, ...rest }: Props) {
  return (
    <select
      data-testid={rest['data-testid']}
      aria-label={rest['aria-label']}
      value={value}
      disabled={disabled}
      onChange={(e) => onChange(e.target.value)}
    >
      {allowNotSet && <option value={NOT_SET}>{notSetLabel}</option>}
      {providerOptions(providers, value).map((p) => (
        <option key={p} value={p}>
          {providerLabel(p)}
        </option>
      ))}
    </select>
  );
}
