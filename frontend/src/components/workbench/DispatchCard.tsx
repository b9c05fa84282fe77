import { dispatchJobId, dispatchStatus, dispatchTitle, jobUsageLine, type JobKind } from '../../core/workbench/workbench';
import type { ToolPart } from '../../core/toolParts';
import { useWorkbench } from './workbenchState';
import { scrollToAnchor } from '../scroll';
import './workbench.css';

/**
 * The teacher started a background job (`research`, `demo`, `visual`): what it asked for, and how
 * the job is doing according to the jobs API ("working…", then "finished", "failed" or
 * "stopped"); once its result is in the transcript, a button jumps to it. An ended job says
 * its usage and the model that ran.
 */
export default function DispatchCard({ kind, part }: { kind: JobKind; part: ToolPart }) {
  const { jobsByToolCall, jobsById, artifacts } = useWorkbench();
  const jobId = dispatchJobId(part.output);
  const job = jobsByToolCall.get(part.toolCallId) ?? (jobId ? jobsById.get(jobId) : undefined);
  const place = artifacts.byToolCall.get(part.toolCallId) ?? (jobId ? artifacts.byJob.get(jobId) : undefined);
  const status = dispatchStatus(part, job, place?.data);
  const title = dispatchTitle(kind, part.input);
  return (
    <div className={`dispatch-card dispatch-${status.state}`} data-testid="dispatch-card" data-tool={kind} data-state={status.state}>
      <div className="dispatch-line">
        <span className="dispatch-title" title={title}>
          {title}
        </span>
        <span className="dispatch-status" data-testid="dispatch-status">
          {(status.state === 'working' || status.state === 'starting') && <span className="spinner spinner-tiny" aria-hidden="true" />}
          {status.text}
        </span>
        {place && place.data.status === 'done' && (
          <button type="button" className="btn btn-small" data-testid="dispatch-show" onClick={() => scrollToAnchor(place.anchor)}>
            Show result ↓
          </button>
        )}
      </div>
      {status.detail && <div className="dispatch-detail">{status.detail}</div>}
      {jobUsageLine(job) && (
        <div className="dispatch-usage" data-testid="dispatch-usage">
          {jobUsageLine(job)}
        </div>
      )}
    </div>
  );
}
