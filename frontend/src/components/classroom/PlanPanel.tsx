import { Fragment, useEffect, useMemo, useRef } from 'react';
import { plainMath } from '../../core/math';
import type { Phase } from '../../core/classroom/phases';
import { planLayers, prerequisitesOf, type Plan, type PlanStatus } from '../../core/classroom/plan';
import MathText from '../MathText';
import './planPanel.css';

interface Props {
  plan: Plan | null;
  statuses: Record<string, PlanStatus>;
  phase: Phase;
  /** Below 900 px: whether the toggled panel is open (wider, the panel always shows). */
  open?: boolean;
  onClose?: () => void;
}

const STATUS_LABEL: Record<PlanStatus, string> = { current: 'now', visited: 'visited', upcoming: 'upcoming' };

/** The lesson plan, in dependency order (topological layers, top to bottom). */
export default function PlanPanel({ plan, statuses, phase, open = false, onClose }: Props) {
  const ref = useRef<HTMLElement>(null);
  // Opened from the toggle: the focus goes into the panel (its own Escape closes it).
  useEffect(() => {
    if (open) ref.current?.focus({ preventScroll: true });
  }, [open]);
  return (
    <aside
      ref={ref}
      id="plan-panel"
      className={open ? 'plan-panel open' : 'plan-panel'}
      data-testid="plan-panel"
      data-open={String(open)}
      aria-label="Lesson plan"
      tabIndex={-1}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open && onClose) {
          e.stopPropagation();
          onClose();
          document.querySelector<HTMLElement>('[data-testid="plan-toggle"]')?.focus();
        }
      }}
    >
      <div className="plan-head">
        <span className="plan-kicker">Lesson plan</span>
        {plan && (
          <h2 className="plan-title">
            <MathText text={plan.title} />
          </h2>
        )}
      </div>
      {plan ? (
        <PlanGraph plan={plan} statuses={statuses} />
      ) : (
        <p className="plan-placeholder" data-testid="plan-placeholder">
          The plan appears here once the teacher writes it.
          {phase === 'probe' && <span className="muted"> First the tutor finds out what you already know.</span>}
        </p>
      )}
    </aside>
  );
}

function PlanGraph({ plan, statuses }: { plan: Plan; statuses: Record<string, PlanStatus> }) {
  const layers = useMemo(() => planLayers(plan), [plan]);
  const prereqs = useMemo(() => prerequisitesOf(plan), [plan]);
  const labels = useMemo(() => new Map(plan.nodes.map((n) => [n.id, n.label])), [plan]);

  return (
    <>
      <ol className="plan-layers">
        {layers.map((layer, depth) => (
          <Fragment key={depth}>
            {depth > 0 && (
              <li className="plan-arrow" aria-hidden="true">
                ↓
              </li>
            )}
            <li className="plan-layer">
              <ul>
                {layer.map((id) => {
                  const status = statuses[id] ?? 'upcoming';
                  const needs = prereqs[id] ?? [];
                  // Name the prerequisites when the arrow alone does not say which they are.
                  const showNeeds = needs.length > 1 || (needs.length === 1 && (layers[depth - 1]?.length ?? 0) > 1);
                  return (
                    <li
                      key={id}
                      className={`plan-node status-${status}`}
                      data-testid="plan-node"
                      data-node-id={id}
                      data-status={status}
                      aria-current={status === 'current' ? 'step' : undefined}
                      title={`${plainMath(labels.get(id) ?? id)} · ${STATUS_LABEL[status]}`}
                    >
                      <span className="plan-dot" aria-hidden="true" />
                      <span className="plan-label">
                        <MathText text={labels.get(id) ?? id} />
                      </span>
                      {status === 'current' && <span className="plan-now">now</span>}
                      {showNeeds && (
                        <span className="plan-needs">
                          after{' '}
                          {needs.map((n, i) => (
                            <Fragment key={n}>
                              {i > 0 && ' & '}
                              <MathText text={labels.get(n) ?? n} />
                            </Fragment>
                          ))}
                        </span>
                      )}
                    </li>
                  );
                })}
              </ul>
            </li>
          </Fragment>
        ))}
      </ol>
      <p className="plan-legend" aria-hidden="true">
        <span className="legend status-visited">visited</span>
        <span className="legend status-current">now</span>
        <span className="legend status-upcoming">upcoming</span>
      </p>
    </>
  );
}
