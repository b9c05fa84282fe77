// Per-role models (issue 30 item 2, seed §7): every model-using role listed once with its default
// (GET /api/settings `modelRoles`), each overridable (PUT /api/settings/roles). Pure.

import { NOT_SET, SLOT_LABELS, modelIdOf, needsBaseUrl, type SlotDraft } from './settings';
import type { ModelRef, Slot } from '../types';

/** A role's default: a slot, or "lesson" (the lesson's own model: prober and teacher). */
export type RoleDefault = Slot | 'lesson';

/** What runs: the server's ResolvedModel (camelCase). */
export interface RoleRuns {
  provider: string;
  model: string;
  offline: boolean;
}

/** One row of GET /api/settings `modelRoles`. */
export interface ModelRole {
  /** Its wire name in the `roles` section ("problemGenerator"). */
  role: string;
  label: string;
  does: string;
  default: RoleDefault;
  /** A role that is skipped, not refused, without a model (the picture checker). */
  optional: boolean;
  override: ModelRef | null;
  runs: RoleRuns | null;
  problem: string | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

const DEFAULTS: readonly RoleDefault[] = ['strong', 'cheap', 'vision', 'lesson'];

function modelRef(value: unknown): ModelRef | null {
  if (!isRecord(value)) return null;
  const provider = str(value.provider);
  const model = str(value.model);
  if (!provider || !model) return null;
  return { provider, model, baseUrl: str(value.baseUrl) };
}

/** The roles of GET /api/settings (`modelRoles`), in the server's order; malformed rows dropped. */
export function parseModelRoles(settings: unknown): ModelRole[] {
  const raw = isRecord(settings) && Array.isArray(settings.modelRoles) ? settings.modelRoles : [];
  const out: ModelRole[] = [];
  for (const row of raw) {
    if (!isRecord(row)) continue;
    const role = str(row.role);
    const label = str(row.label);
    if (!role || !label || !DEFAULTS.includes(row.default as RoleDefault)) continue;
    const runs = isRecord(row.runs) && str(row.runs.model) && str(row.runs.provider) ? row.runs : null;
    out.push({
      role,
      label,
      does: str(row.does) ?? '',
      default: row.default as RoleDefault,
      optional: row.optional === true,
      override: modelRef(row.override),
      runs: runs ? { provider: String(runs.provider), model: String(runs.model), offline: runs.offline === true } : null,
      problem: str(row.problem),
    });
  }
  return out;
}

/** A role's draft: NOT_SET provider = "Default" (no override). */
export type RolesDraft = Record<string, SlotDraft>;

export function rolesDraft(roles: readonly ModelRole[]): RolesDraft {
  const draft: RolesDraft = {};
  for (const r of roles) {
    draft[r.role] = r.override
      ? { provider: r.override.provider, model: r.override.model, baseUrl: r.override.baseUrl ?? '' }
      : { provider: NOT_SET, model: '', baseUrl: '' };
  }
  return draft;
}

/** Body of PUT /api/settings/roles: every listed role, null where it runs its default. */
export function rolesUpdate(draft: RolesDraft): Record<string, ModelRef | null> {
  const body: Record<string, ModelRef | null> = {};
  for (const [role, d] of Object.entries(draft)) {
    if (d.provider === NOT_SET) {
      body[role] = null;
      continue;
    }
    const ref: ModelRef = { provider: d.provider, model: modelIdOf(d) };
    if (needsBaseUrl(d.provider)) ref.baseUrl = d.baseUrl.trim() || null;
    body[role] = ref;
  }
  return body;
}

export function rolesDraftsEqual(a: RolesDraft, b: RolesDraft): boolean {
  return JSON.stringify(rolesUpdate(a)) === JSON.stringify(rolesUpdate(b));
}

/** Problems to fix before saving, each naming the role by its label; empty = OK. */
export function validateRoles(draft: RolesDraft, roles: readonly ModelRole[]): string[] {
  const errors: string[] = [];
  for (const r of roles) {
    const d = draft[r.role];
    if (!d || d.provider === NOT_SET) continue;
    if (!d.model.trim() && d.provider !== 'local') errors.push(`${r.label}: enter a model id (or choose "Default").`);
    const url = d.baseUrl.trim();
    if (needsBaseUrl(d.provider) && !/^https?:\/\/\S+$/i.test(url)) {
      errors.push(`${r.label}: an OpenAI-compatible server needs its base URL, starting with http:// or https://.`);
    }
  }
  return errors;
}

/** The "Default" choice in words: "Default: the Strong model" / "Default: each lesson's own model". */
export function defaultLabel(role: Pick<ModelRole, 'default'>): string {
  return role.default === 'lesson' ? "Default: each lesson's own model" : `Default: the ${SLOT_LABELS[role.default]}`;
}

/** What the role runs now, in words. */
export function runsLabel(role: ModelRole): string {
  if (role.runs) return `Runs ${role.runs.model} via ${role.runs.provider}${role.runs.offline ? ' (tiny offline demo model)' : ''}`;
  if (role.problem) return role.problem;
  if (role.default === 'lesson' && !role.override) return "Runs each lesson's own model (chosen when the lesson starts).";
  if (role.optional) return 'Optional, not set: pictures are still drawn and checked, but not looked at.';
  return 'Cannot run with the current settings and keys.';
}
