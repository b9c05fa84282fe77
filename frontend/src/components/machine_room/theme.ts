// The colour theme (issue 18): 'system' follows prefers-color-scheme; 'light' and 'dark' are the
// learner's choice, kept in localStorage and applied as <html data-theme="light|dark">. The
// colours themselves are CSS custom properties (theme.css); the graph canvas reads its own from
// there too (graph/draw.ts, graphColorsFromCss).

export type ThemeChoice = 'system' | 'light' | 'dark';

export const THEME_KEY = 'lh-theme';
/** Fired on window whenever the applied theme may have changed (a choice, or the system's scheme). */
export const THEME_EVENT = 'lh-themechange';

export function isThemeChoice(value: unknown): value is ThemeChoice {
  return value === 'system' || value === 'light' || value === 'dark';
}

/** The stored choice; 'system' when none is stored, it is not one of the three, or storage is unavailable. */
export function storedTheme(): ThemeChoice {
  try {
    const value = window.localStorage.getItem(THEME_KEY);
    return isThemeChoice(value) ? value : 'system';
  } catch {
    return 'system';
  }
}

/** Applies a choice to the document (no storage). */
export function applyTheme(choice: ThemeChoice, root: HTMLElement = document.documentElement): void {
  if (choice === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', choice);
  window.dispatchEvent(new Event(THEME_EVENT));
}

/** Stores and applies a choice; storage failing (private mode) still applies it for this page. */
export function setTheme(choice: ThemeChoice): void {
  try {
    if (choice === 'system') window.localStorage.removeItem(THEME_KEY);
    else window.localStorage.setItem(THEME_KEY, choice);
  } catch {
    // applied below all the same
  }
  applyTheme(choice);
}

/** Calls `listener` whenever the applied theme may have changed; returns the unsubscribe. */
export function onThemeChange(listener: () => void): () => void {
  const media = window.matchMedia?.('(prefers-color-scheme: dark)');
  window.addEventListener(THEME_EVENT, listener);
  media?.addEventListener('change', listener);
  return () => {
    window.removeEventListener(THEME_EVENT, listener);
    media?.removeEventListener('change', listener);
  };
}

/** Applies the stored choice now and whenever another window of the app changes it. */
export function followStoredTheme(): void {
  applyTheme(storedTheme());
  window.addEventListener('storage', (e) => {
    if (e.key === THEME_KEY) applyTheme(storedTheme());
  });
}
