// The theme choice (issue 18, item 5); the graph canvas colours read from the theme are tested
// beside the canvas (components/library/graph/draw.test.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { THEME_KEY, isThemeChoice, storedTheme } from './theme';

describe('the stored theme choice', () => {
  afterEach(() => vi.unstubAllGlobals());

  function withStorage(value: string | null, fails = false) {
    vi.stubGlobal('window', {
      localStorage: {
        getItem: (key: string) => {
          if (fails) throw new Error('storage disabled');
          return key === THEME_KEY ? value : null;
        },
      },
    });
  }

  it('is one of system, light, dark', () => {
    expect(['system', 'light', 'dark'].every(isThemeChoice)).toBe(true);
    expect(isThemeChoice('sepia')).toBe(false);
    expect(isThemeChoice(null)).toBe(false);
  });

  it('reads a stored choice, else system', () => {
    withStorage('dark');
    expect(storedTheme()).toBe('dark');
    withStorage(null);
    expect(storedTheme()).toBe('system');
    withStorage('purple');
    expect(storedTheme()).toBe('system');
    withStorage('light', true);
    expect(storedTheme()).toBe('system');
  });
});
