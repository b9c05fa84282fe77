import { Link } from 'react-router-dom';
import { useAppState } from '../../appState';
import { bannerFor } from '../../core/settings';

/** Shown on every page when lessons would run on the offline demo model, or cannot run at all. */
export default function OfflineBanner() {
  const { settings, settingsError } = useAppState();
  const banner = bannerFor(settings);

  if (!settings && settingsError) {
    return (
      <div className="banner banner-warn" role="status" data-testid="settings-unavailable">
        Could not load settings: {settingsError}
      </div>
    );
  }
  if (!banner) return null;
  if (banner.kind === 'offline' && banner.error) {
    return (
      <div className="banner banner-warn" role="status" data-testid="offline-banner">
        <strong>The offline demo model is not working:</strong> {banner.error}. Send your message again to retry,
        or add your own API key in <Link to="/settings">Settings</Link>.
      </div>
    );
  }
  if (banner.kind === 'offline' && banner.crash) {
    return (
      <div className="banner banner-warn" role="status" data-testid="offline-banner">
        <strong>The offline demo model failed during your last turn:</strong> {banner.crash}. It was restarted: send
        your message again, or add your own API key in <Link to="/settings">Settings</Link>.
      </div>
    );
  }
  if (banner.kind === 'offline') {
    return (
      <div className="banner banner-info" role="status" data-testid="offline-banner">
        You are using a tiny offline demo model ({banner.model}). Its answers will be weak. Add your own API key in{' '}
        <Link to="/settings">Settings</Link> for real lessons.
      </div>
    );
  }
  return (
    <div className="banner banner-warn" role="status" data-testid="offline-banner">
      <strong>No model can run lessons right now.</strong>
      <ul>
        {banner.problems.map((p, i) => (
          <li key={i}>{p}</li>
        ))}
      </ul>
      Fix this in <Link to="/settings">Settings</Link>.
    </div>
  );
}
