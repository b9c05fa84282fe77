import './phaseStepper.css';
import { PHASES, type Phase } from '../../core/classroom/phases';

const HINT: Record<Phase, string> = {
  probe: 'Finding out what you already know',
  plan: 'The teacher is writing your lesson plan',
  teach: 'Teaching, step by step',
};

/** probe → plan → teach, with the active phase marked (its element is `phase-indicator`). */
export default function PhaseStepper({ phase }: { phase: Phase }) {
  const active = PHASES.indexOf(phase);
  return (
    <ol className="phases" aria-label="Lesson phase" title={HINT[phase]}>
      {PHASES.map((p, i) => {
        const state = i < active ? 'done' : i === active ? 'active' : 'todo';
        return (
          <li key={p} className={`phase phase-${state}`}>
            {i > 0 && (
              <span className="phase-arrow" aria-hidden="true">
                →
              </span>
            )}
            {i === active ? (
              <span className="phase-label" data-testid="phase-indicator" data-phase={p} aria-current="step">
                {p}
              </span>
            ) : (
              <span className="phase-label">{p}</span>
            )}
          </li>
        );
      })}
    </ol>
  );
}
