// The graph canvas colours read from the theme (issue 18, item 5).
import { describe, expect, it } from 'vitest';
import { LIGHT_GRAPH_COLORS, graphColorsFromCss } from './draw';

function styleOf(values: Record<string, string>) {
  return { getPropertyValue: (name: string) => values[name] ?? '' };
}

describe('graph colours from the theme', () => {
  it('reads every --graph-* property', () => {
    const colors = graphColorsFromCss(
      styleOf({
        '--graph-bg': ' #171b21 ',
        '--graph-text': '#dfe4ea',
        '--graph-halo': 'rgba(23, 27, 33, 0.9)',
        '--graph-implication': '#9aa5b2',
        '--graph-link': '150, 162, 178',
        '--graph-outline': 'rgba(23, 27, 33, 0.95)',
        '--graph-accent': '#7fa6ff',
      }),
    );
    expect(colors).toEqual({
      background: '#171b21',
      text: '#dfe4ea',
      halo: 'rgba(23, 27, 33, 0.9)',
      implication: '#9aa5b2',
      link: [150, 162, 178],
      outline: 'rgba(23, 27, 33, 0.95)',
      accent: '#7fa6ff',
    });
  });

  it('keeps the light colour for a missing or malformed property', () => {
    const colors = graphColorsFromCss(styleOf({ '--graph-bg': '#000000', '--graph-link': '1, two, 3' }));
    expect(colors.background).toBe('#000000');
    expect(colors.link).toEqual(LIGHT_GRAPH_COLORS.link);
    expect(colors.text).toBe(LIGHT_GRAPH_COLORS.text);
  });
});
