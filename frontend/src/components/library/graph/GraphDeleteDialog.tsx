import { deleteDialogWords, permanenceLine } from '../../../core/library/graph';
import ConfirmDialog from '../../ConfirmDialog';
import MathText from '../../MathText';

interface Props {
  /** What the user picked, as it should read (a proposition's name, an implication's chain line). */
  names: readonly string[];
  /** How many of them are propositions, and how many chains go with them besides the picked ones. */
  propositions: number;
  extraChains: number;
  busy: boolean;
  error: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}

/** "Delete node?" / "Delete N nodes?" ("Delete chain?" when only chains are picked): the names (at most 8, then "and K more") and one permanence line. */
export default function GraphDeleteDialog({ names, propositions, extraChains, busy, error, onConfirm, onCancel }: Props) {
  const words = deleteDialogWords(names, 8, propositions);
  return (
    <ConfirmDialog
      title={words.title}
      confirmLabel="Delete"
      busy={busy}
      error={error}
      onConfirm={onConfirm}
      onCancel={onCancel}
      testIds={{ dialog: 'delete-dialog', confirm: 'delete-confirm', cancel: 'delete-cancel', error: 'delete-error' }}
    >
      <ul className="delete-names" data-testid="delete-names">
        {words.listed.map((name, i) => (
          <li key={i}>
            <MathText text={name} />
          </li>
        ))}
        {words.more > 0 && <li className="muted">and {words.more} more</li>}
      </ul>
      <p className="delete-permanence" data-testid="delete-permanence">
        {permanenceLine(propositions, extraChains)}
      </p>
    </ConfirmDialog>
  );
}
