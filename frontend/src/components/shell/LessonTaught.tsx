import { useEffect, useState } from 'react';
import * as api from '../../api';

interface Props {
  chatId: string;
  /** Whether the learner also asked to remove what the lesson taught (one explicit choice, off by default). */
  forget: boolean;
  onForgetChange: (forget: boolean) => void;
}

/**
 * The lesson delete dialog's word on the graph (issue 29): what the lesson taught stays in the
 * graph, and one checkbox to remove it too. Reads GET /api/graph/lessons/{id}; says nothing more
 * when the lesson never reached the graph.
 */
export default function LessonTaught({ chatId, forget, onForgetChange }: Props) {
  const [taught, setTaught] = useState<api.LessonKnowledge | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let live = true;
    setTaught(null);
    setFailed(false);
    api.lessonKnowledge(chatId).then(
      (k) => live && setTaught(k),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [chatId]);

  if (failed) {
    return (
      <p className="muted small" data-testid="lesson-taught">
        What it taught stays in your graph.
      </p>
    );
  }
  if (taught === null) {
    return (
      <p className="muted small" data-testid="lesson-taught-loading">
        Looking up what it taught…
      </p>
    );
  }
  if (taught.propositions === 0) {
    return (
      <p className="muted small" data-testid="lesson-taught" data-propositions="0">
        Nothing it taught is in your graph yet.
      </p>
    );
  }
  return (
    <div data-testid="lesson-taught" data-propositions={taught.propositions}>
      <p>What it taught stays in your graph: {taught.propositions === 1 ? '1 proposition' : `${taught.propositions} propositions`} from this lesson.</p>
      <label style={{ display: 'flex', gap: 6, alignItems: 'center' }}>
        <input type="checkbox" data-testid="lesson-forget" checked={forget} disabled={taught.reading} onChange={(e) => onForgetChange(e.target.checked)} />{' '}
        Also remove what it taught from my graph
      </label>
      {taught.reading && <p className="muted small">It is being read into your graph now; it can be removed once that ends.</p>}
    </div>
  );
}
