import { useState } from 'react';
import { setTheme, storedTheme, type ThemeChoice } from './theme';
import './themeSwitch.css';

const CHOICES: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

/** Settings' Appearance section: System / Light / Dark (native radios; stored in this browser). */
export default function ThemeSwitch() {
  const [choice, setChoice] = useState<ThemeChoice>(storedTheme);
  return (
    <section className="card" data-testid="appearance-settings">
      <h2>Appearance</h2>
      <fieldset className="theme-switch">
        <legend>Colour theme</legend>
        {CHOICES.map((c) => (
          <label key={c.value} className="theme-choice">
            <input
              type="radio"
              name="theme"
              value={c.value}
              data-testid={`theme-${c.value}`}
              checked={choice === c.value}
              onChange={() => {
                setChoice(c.value);
                setTheme(c.value);
              }}
            />
            {c.label}
          </label>
        ))}
      </fieldset>
      <p className="muted small">System follows your device&apos;s light or dark setting. The choice is kept in this browser.</p>
    </section>
  );
}
