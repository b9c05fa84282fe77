import { useEffect } from 'react';
import { Outlet, useLocation } from 'react-router-dom';
import { useAppState } from '../appState';
import Sidebar from './Sidebar';
import OfflineBanner from './OfflineBanner';
import ActivityDock from './ActivityDock';

export default function Layout() {
  const { pathname } = useLocation();
  const { refreshSettings } = useAppState();

  // Keep the banner honest: settings may change (keys, env, offline model) while the app is open.
  useEffect(() => {
    void refreshSettings();
  }, [pathname, refreshSettings]);

  return (
    <div className="app">
      <Sidebar />
      <main className="main">
        <OfflineBanner />
        <Outlet />
      </main>
      <ActivityDock />
    </div>
  );
}
