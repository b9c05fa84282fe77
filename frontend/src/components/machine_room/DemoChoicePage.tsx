import { useEffect } from 'react';
import { Link } from 'react-router-dom';
import { useAppState, useCreateLesson } from '../../appState';
import { bannerFor } from '../../core/machine_room/settings';
import './demoChoice.css';

/**
 * The demo screen (issue 29, item 3): "New lesson" leads here while lessons would run on the bundled
 * tiny offline model. It says plainly that the model is a demo that gets facts wrong; a lesson starts
 * on it only when the learner chooses "Start a demo lesson" (POST /api/chats with demo: true).
 */
export default function DemoChoicePage() {
  const { settings, refreshSettings } = useAppState();
  const { create, creating, error } = useCreateLesson();
  const banner = bannerFor(settings);
  // the settings this screen decides on may be older than a key added meanwhile: read them again
  useEffect(() => {
    void refreshSettings();
  }, [refreshSettings]);

  if (banner?.kind !== 'offline') {
    return (
      <div className="page page-narrow demo-choice" data-testid="demo-choice">
        <h1>New lesson</h1>
        <p>{settings ? 'Lessons run on the model you set up; no demo is needed.' : 'Loading settings…'}</p>
        {settings && (
          <button type="button" className="btn btn-primary" data-testid="demo-not-needed" onClick={() => void create()} disabled={creating}>
            Start a lesson
          </button>
        )}
      </div>
    );
  }
  return (
    <div className="page page-narrow demo-choice" data-testid="demo-choice">
      <h1>No teacher is set up yet</h1>
      <p className="demo-warning" data-testid="demo-warning">
        <strong>The only model here is a tiny offline demo ({banner.model}). It gets facts wrong.</strong> Its
        explanations and the answers it marks as right may be false: do not learn from it. It shows how a lesson
        works, and it is slow on most computers.
      </p>
      <p>
        For real lessons, set up a real teacher: add an API key, sign in with a subscription, or use a model server on
        this computer.
      </p>
      <div className="demo-actions">
        <Link className="btn btn-primary" to="/settings#api-keys" data-testid="demo-setup">
          Set up a real teacher
        </Link>
        <button type="button" className="btn" data-testid="demo-start" onClick={() => void create({ demo: true })} disabled={creating}>
          Start a demo lesson anyway
        </button>
      </div>
      {error && (
        <p className="demo-error" role="alert" data-testid="demo-error">
          {error}
        </p>
      )}
    </div>
  );
}
