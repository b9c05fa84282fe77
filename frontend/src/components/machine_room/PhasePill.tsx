import './phasePill.css';
import { isRunningRow, phaseWords, type ActivityPhase } from '../../core/machine_room/activity';

/** A job's phase as a small coloured pill (a spinner while it works). */
export default function PhasePill({ phase }: { phase: ActivityPhase }) {
  return (
    <span className={`phase-pill phase-${phase}`}>
      {isRunningRow({ phase }) && phase !== 'queued' && <span className="spinner spinner-tiny" aria-hidden="true" />}
      {phaseWords(phase)}
    </span>
  );
}
