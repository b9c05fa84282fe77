import { useMemo, useState } from 'react';
import {
  artifactAnchor,
  DEMO_SANDBOX,
  demoUrl,
  linkCitations,
  safeUrl,
  showsArtifactHere,
  sourceAnchor,
  sourceHost,
  svgDataUrl,
  type ArtifactData,
  type DemoArtifact,
  type JobKind,
  type ResearchArtifact,
  type VisualArtifact,
} from '../../core/workbench/workbench';
import { useWorkbench } from './workbenchState';
import Markdown from '../Markdown';
import './workbench.css';

const KIND_LABEL: Record<JobKind, string> = { research: 'Research', demo: 'Demo', visual: 'Drawing' };
const KIND_NOUN: Record<JobKind, string> = { research: 'The research', demo: 'The demo', visual: 'The drawing' };

/**
 * What a background job delivered, in the transcript: a research summary with its sources, a
 * sandboxed demo, a picture; or a small note that the job failed or was stopped. Shown once per
 * job, where it first appears (a result streamed into a turn and its saved steer are one card).
 */
export default function ArtifactCard({ data, messageId }: { data: ArtifactData; messageId: string }) {
  const { artifacts } = useWorkbench();
  if (!showsArtifactHere(artifacts, data, messageId)) return null;
  const anchor = artifactAnchor(data.jobId);
  const common = { id: anchor, 'data-testid': 'artifact-card', 'data-kind': data.kind, 'data-status': data.status, 'data-job-id': data.jobId };
  if (data.status !== 'done' || !data.artifact) {
    const text =
      data.status === 'aborted'
        ? `${KIND_NOUN[data.kind]} was stopped before it finished.`
        : `${KIND_NOUN[data.kind]} failed${data.error ? `: ${data.error.replace(/\.+$/, '')}.` : '.'}`;
    return (
      <div className="artifact artifact-muted" role="note" {...common}>
        <span className="artifact-kind">{KIND_LABEL[data.kind]}</span> {text}
      </div>
    );
  }
  const artifact = data.artifact;
  return (
    <section className={`artifact artifact-${artifact.kind}`} aria-label={KIND_LABEL[artifact.kind]} {...common}>
      {artifact.kind === 'research' && <ResearchBody jobId={data.jobId} artifact={artifact} />}
      {artifact.kind === 'demo' && <DemoBody jobId={data.jobId} artifact={artifact} />}
      {artifact.kind === 'visual' && <VisualBody artifact={artifact} />}
    </section>
  );
}

function ResearchBody({ jobId, artifact }: { jobId: string; artifact: ResearchArtifact }) {
  const summary = useMemo(() => linkCitations(artifact.summary, artifact.sources.length, jobId), [artifact, jobId]);
  return (
    <>
      <div className="artifact-kind">Research</div>
      {artifact.question && <h3 className="artifact-title">{artifact.question}</h3>}
      <div className="artifact-summary" data-testid="research-summary">
        <Markdown text={summary} />
      </div>
      {artifact.sources.length > 0 && (
        <ol className="artifact-sources" data-testid="research-sources">
          {artifact.sources.map((source, i) => {
            const href = safeUrl(source.url);
            const host = sourceHost(source.url);
            return (
              <li key={i} id={sourceAnchor(jobId, i + 1)}>
                {href ? (
                  <a href={href} target="_blank" rel="noopener noreferrer">
                    {source.title}
                  </a>
                ) : (
                  <span>{source.title}</span>
                )}
                {host && <span className="artifact-host"> · {host}</span>}
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}

const DEMO_HEIGHT = '360px';
const DEMO_EXPANDED = '75vh';

function DemoBody({ jobId, artifact }: { jobId: string; artifact: DemoArtifact }) {
  const [expanded, setExpanded] = useState(false);
  return (
    <>
      <div className="artifact-head">
        <div>
          <div className="artifact-kind">Demo</div>
          <h3 className="artifact-title">{artifact.title}</h3>
        </div>
        <button
          type="button"
          className="btn btn-small"
          data-testid="demo-expand"
          aria-expanded={expanded}
          onClick={() => setExpanded((e) => !e)}
        >
          {expanded ? 'Shrink' : 'Expand'}
        </button>
      </div>
      {/* The sandbox gives the demo scripts and nothing else: an opaque origin (never
          allow-same-origin), no forms, popups or navigation of the app; the page's own CSP
          (served with it) lets it load nothing from anywhere. */}
      <div className="demo-frame" style={{ height: expanded ? DEMO_EXPANDED : DEMO_HEIGHT }}>
        <iframe title={artifact.title} sandbox={DEMO_SANDBOX} src={demoUrl(jobId)} referrerPolicy="no-referrer" data-testid="demo-frame" />
      </div>
      <Checks checks={artifact.checks} />
    </>
  );
}

function VisualBody({ artifact }: { artifact: VisualArtifact }) {
  // Only ever an <img>: an image never runs the SVG's scripts or loads what it links to.
  const src = useMemo(() => svgDataUrl(artifact.svg), [artifact.svg]);
  return (
    <>
      <div className="artifact-kind">Drawing</div>
      <figure className="visual-figure">
        <img src={src} alt={artifact.title} className="visual-img" data-testid="visual-img" />
        <figcaption>{artifact.title}</figcaption>
      </figure>
      {!artifact.lookedAt && (
        <p className="artifact-note" data-testid="visual-not-looked-at">
          Not looked at by a vision model: only checked that it renders.
        </p>
      )}
      <Checks checks={artifact.checks} />
    </>
  );
}

function Checks({ checks }: { checks: readonly string[] }) {
  if (!checks.length) return null;
  return (
    <details className="artifact-checks" data-testid="artifact-checks">
      <summary>
        What the check saw ({checks.length})
      </summary>
      <ul>
        {checks.map((c, i) => (
          <li key={i}>{c}</li>
        ))}
      </ul>
    </details>
  );
}
