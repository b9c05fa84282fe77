// Render tests of the practice surfaces (server-side rendering, no DOM): the creation dialog in
// both modes, the list's levels words, and a problem in each of its states.
import { createElement, type ComponentProps } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { defaultSetTitle, FALLBACK_LEVELS, type PracticeProblem } from '../../core/practice/practice';
import CreateSetDialog, { LevelSlider, PresentationToggle } from './CreateSetDialog';
import ProblemCard from './ProblemCard';

function dialog(props: ComponentProps<typeof CreateSetDialog>): string {
  return renderToStaticMarkup(createElement(MemoryRouter, null, createElement(CreateSetDialog, props)));
}

/** The text of the first element carrying this test id (tags stripped). */
function byTestId(html: string, id: string): string | null {
  const m = new RegExp(`<(\\w+)[^>]*data-testid="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return m ? m[2].replace(/<[^>]+>/g, '') : null;
}

/** The opening tag of the element carrying this test id. */
function tagOf(html: string, id: string): string {
  return new RegExp(`<[^>]*data-testid="${id}"[^>]*>`).exec(html)?.[0] ?? '';
}

const noop = () => undefined;

describe('CreateSetDialog', () => {
  it('custom mode: the selection shape and the dated default title, no cluster picker', () => {
    const html = dialog({ custom: { nodeIds: ['a', 'b', 'c'], chains: 2 }, onClose: noop });
    expect(html).toContain('data-testid="create-dialog"');
    expect(html).toContain('data-mode="custom"');
    expect(byTestId(html, 'selection-summary')).toBe('3 nodes → 2 chains');
    expect(byTestId(html, 'default-title')).toBe(defaultSetTitle());
    expect(html).not.toContain('data-testid="cluster-picker"');
    expect(html).toContain(`placeholder="${defaultSetTitle()}"`);
  });

  it('picker mode: the cluster picker, create disabled until something is picked', () => {
    const html = dialog({ onClose: noop });
    expect(html).toContain('data-mode="clusters"');
    expect(html).toContain('data-testid="cluster-picker"');
    expect(html).not.toContain('data-testid="selection-summary"');
    expect(html).toMatch(/data-testid="create-submit" disabled=""/);
  });

  it('shows the default levels by name and definition, sliders stepped over every level', () => {
    const html = dialog({ custom: { nodeIds: ['a'], chains: 1 }, onClose: noop });
    expect(byTestId(html, 'level-name-rung')).toBe('Direct exercise');
    expect(byTestId(html, 'level-definition-rung')).toBe(FALLBACK_LEVELS.rungs[2].definition);
    expect(byTestId(html, 'level-name-cue')).toBe('Adjacent context');
    expect(byTestId(html, 'level-name-presentation')).toBe('Theory');
    for (const [id, max, value] of [
      ['rung-slider', 4, 2],
      ['cue-slider', 2, 1],
    ] as const) {
      const tag = tagOf(html, id);
      for (const attr of ['type="range"', 'min="0"', `max="${max}"`, 'step="1"', `value="${value}"`]) expect(tag).toContain(attr);
    }
    expect(html).toMatch(/aria-pressed="true" data-testid="presentation-theory"/);
    expect(html).toMatch(/aria-pressed="false" data-testid="presentation-application"/);
    expect(html).toContain('data-testid="note-input"');
    expect(byTestId(html, 'note-counter')).toBe('0/2000');
  });

  it('a slider names whatever level it stands on; the toggle too', () => {
    const slider = renderToStaticMarkup(createElement(LevelSlider, { axis: 'rung', label: 'Rung', table: FALLBACK_LEVELS.rungs, value: 4, onChange: noop, testId: 'rung-slider' }));
    expect(byTestId(slider, 'level-name-rung')).toBe('Path-finding');
    const toggle = renderToStaticMarkup(createElement(PresentationToggle, { levels: FALLBACK_LEVELS, value: 'application', onChange: noop }));
    expect(byTestId(toggle, 'level-name-presentation')).toBe('Application');
    expect(byTestId(toggle, 'level-definition-presentation')).toBe(FALLBACK_LEVELS.presentations[1].definition);
  });
});

function problem(over: Partial<PracticeProblem> = {}): PracticeProblem {
  return {
    id: 'p1',
    index: 1,
    title: 'Limits',
    chainIds: ['arg_1'],
    status: 'ready',
    error: null,
    statement: 'Show that $\\lim_{x \\to 0} x = 0$.',
    answer: null,
    answeredAt: null,
    solution: null,
    rubric: null,
    grade: null,
    gradeStatus: 'none',
    gradeError: null,
    ...over,
  };
}

function card(p: PracticeProblem, extra: object = {}): string {
  return renderToStaticMarkup(
    createElement(ProblemCard, { problem: p, setReady: true, draft: '', onDraft: noop, onSubmit: noop, submitting: false, submitError: null, ...extra }),
  );
}

describe('ProblemCard', () => {
  it('a ready problem: numbered, its statement with math, one answer box and one Submit', () => {
    const html = card(problem(), { draft: 'because' });
    expect(html).toContain('data-problem-id="p1"');
    expect(html).toContain('data-status="ready"');
    expect(html).toContain('class="katex"');
    expect(html.match(/data-testid="answer-input"/g)).toHaveLength(1);
    expect(html.match(/data-testid="answer-submit"/g)).toHaveLength(1);
    expect(html).not.toMatch(/data-testid="answer-submit" disabled/);
    expect(html).not.toContain('readOnly');
    expect(html).not.toContain('data-testid="solution"');
  });

  it('Submit waits for text and for the set to be ready', () => {
    expect(card(problem())).toMatch(/data-testid="answer-submit" disabled=""/);
    const waiting = card(problem(), { draft: 'x', setReady: false });
    expect(waiting).toMatch(/data-testid="answer-submit" disabled=""/);
    expect(waiting).toContain('once every problem is written');
  });

  it('answered: read-only answer, the solution at once, the rubric folded, grading underway', () => {
    const html = card(problem({ answer: 'my answer', solution: 'The **solution**.', rubric: '- point one', gradeStatus: 'grading' }));
    expect(html).toContain('>my answer</textarea>');
    expect(html).toMatch(/<textarea[^>]*readOnly=""/);
    expect(html).toMatch(/data-testid="answer-submit" disabled=""[^>]*>Submitted/);
    expect(html).toContain('<strong>solution</strong>');
    expect(html).toMatch(/<details class="problem-rubric" data-testid="rubric"><summary>Rubric<\/summary>/);
    expect(html).not.toMatch(/<details[^>]*open/);
    expect(html).toContain('data-testid="grade-pending"');
    expect(html).not.toContain('data-testid="grade-score"');
  });

  it('graded: the score and the comment', () => {
    const html = card(problem({ answer: 'a', solution: 's', rubric: 'r', gradeStatus: 'graded', grade: { score: 7, comment: 'Met two of three points.' } }));
    expect(byTestId(html, 'grade-score')).toBe('7/10');
    expect(byTestId(html, 'grade-comment')).toBe('Met two of three points.');
  });

  it('interrupted or failed grade: an honest line, the answer standing', () => {
    for (const gradeStatus of ['interrupted', 'error'] as const) {
      const html = card(problem({ answer: 'a', solution: 's', rubric: 'r', gradeStatus, gradeError: 'the server restarted.' }));
      expect(byTestId(html, 'grade-interrupted')).toContain('Grade interrupted: the server restarted.');
      expect(html).toContain('data-testid="solution"');
    }
  });

  it('a problem that failed shows its error alone', () => {
    const html = card(problem({ status: 'error', error: 'The generator gave up.', statement: null }));
    expect(byTestId(html, 'problem-error')).toBe('The generator gave up.');
    expect(html).not.toContain('data-testid="answer-input"');
    expect(html).not.toContain('data-testid="problem-statement"');
  });

  it('a problem still being written says so', () => {
    const html = card(problem({ status: 'generating', statement: null }));
    expect(byTestId(html, 'problem-waiting')).toContain('Writing this problem');
    expect(html).not.toContain('data-testid="answer-input"');
  });

  it('the submit error shows under the box', () => {
    expect(byTestId(card(problem(), { draft: 'x', submitError: 'This problem was already answered.' }), 'answer-error')).toBe('This problem was already answered.');
  });
});
