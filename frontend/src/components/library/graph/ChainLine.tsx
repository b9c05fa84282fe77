import './chainLine.css';
import katex from 'katex';
import { Fragment } from 'react';
import { plainMath } from '../../../core/math';
import MathText from '../../MathText';

// The two operators, rendered once by KaTeX (the stylesheet is loaded in main.tsx).
const AND_HTML = katex.renderToString('\\land', { throwOnError: false });
const IMPLIES_HTML = katex.renderToString('\\implies', { throwOnError: false });

interface Chip {
  id: string;
  name: string;
}

interface Props {
  premises: readonly Chip[];
  conclusion: Chip;
  /** Called with a proposition id when its chip is clicked. */
  onChip?: (id: string) => void;
}

/** A reasoning chain as a line: premise chips joined by ∧, then ⟹ and the conclusion. A lonely proposition is one chip. */
export default function ChainLine({ premises, conclusion, onChip }: Props) {
  const chip = (c: Chip, extra = '') => {
    const cls = `chip${extra}`;
    return onChip ? (
      <button type="button" className={`${cls} chip-button`} data-testid="chain-chip" data-node-id={c.id} title={plainMath(c.name)} onClick={() => onChip(c.id)}>
        <MathText text={c.name} />
      </button>
    ) : (
      <span className={cls} data-testid="chain-chip" data-node-id={c.id} title={plainMath(c.name)}>
        <MathText text={c.name} />
      </span>
    );
  };
  return (
    <span className="chain-line" data-testid="chain-line">
      {premises.map((p, i) => (
        <Fragment key={p.id}>
          {i > 0 && <span className="chain-op" aria-label="and" dangerouslySetInnerHTML={{ __html: AND_HTML }} />}
          {chip(p)}
        </Fragment>
      ))}
      {premises.length > 0 && <span className="chain-op chain-implies" aria-label="implies" dangerouslySetInnerHTML={{ __html: IMPLIES_HTML }} />}
      {chip(conclusion, premises.length ? ' chip-conclusion' : '')}
    </span>
  );
}
