import { useCallback, useEffect, useRef, useState } from 'react';
import { Outlet, useLocation } from 'react-router-dom';
import { useAppState } from '../../appState';
import Sidebar from './Sidebar';
import OfflineBanner from '../machine_room/OfflineBanner';
import ActivityDock from '../machine_room/ActivityDock';
import Toasts from '../Toasts';
import './layout.css';

export default function Layout() {
  const { pathname } = useLocation();
  const { refreshSettings } = useAppState();

  // Keep the banner honest: settings may change (keys, env, offline model) while the app is open.
  useEffect(() => {
    void refreshSettings();
  }, [pathname, refreshSettings]);

  // Below 900 px the sidebar is a drawer (layout.css): the header's toggle opens it, Escape, the
  // backdrop or a navigation closes it; the focus goes into it and back to the toggle.
  const [navOpen, setNavOpen] = useState(false);
  const toggleRef = useRef<HTMLButtonElement>(null);
  const closeNav = useCallback((restoreFocus: boolean) => {
    setNavOpen(false);
    if (restoreFocus) toggleRef.current?.focus();
  }, []);
  useEffect(() => {
    setNavOpen(false);
  }, [pathname]);
  // Widening the window past the drawer's breakpoint closes it (the sidebar is always there then).
  useEffect(() => {
    const wide = window.matchMedia('(min-width: 901px)');
    const onChange = () => {
      if (wide.matches) setNavOpen(false);
    };
    wide.addEventListener('change', onChange);
    return () => wide.removeEventListener('change', onChange);
  }, []);
  useEffect(() => {
    if (!navOpen) return;
    document.getElementById('sidebar')?.querySelector<HTMLElement>('a[href], button:not(:disabled)')?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') closeNav(true);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [navOpen, closeNav]);

  return (
    <div className={navOpen ? 'app nav-open' : 'app'}>
      <header className="topbar">
        <button
          ref={toggleRef}
          type="button"
          className="btn nav-toggle"
          data-testid="nav-toggle"
          aria-expanded={navOpen}
          aria-controls="sidebar"
          onClick={() => setNavOpen((open) => !open)}
        >
          <span aria-hidden="true">☰</span> Lessons
        </button>
        <span className="topbar-brand">Learning Harness</span>
      </header>
      <Sidebar />
      {navOpen && <div className="nav-backdrop" data-testid="nav-backdrop" aria-hidden="true" onClick={() => closeNav(false)} />}
      {/* the open drawer is modal: the page behind it takes no focus or clicks */}
      <main className="main" inert={navOpen}>
        <OfflineBanner />
        <Outlet />
      </main>
      <ActivityDock />
      <Toasts />
    </div>
  );
}
