// The top of a windowed transcript (core/transcriptWindow.ts): how many earlier messages are not
// drawn, and a control that draws the next step of them.
import './earlierMessages.css';

export default function EarlierMessages({ hidden, next, onShow }: { hidden: number; next: number; onShow: () => void }) {
  if (hidden <= 0) return null;
  return (
    <div className="earlier-messages" data-testid="earlier-messages" data-hidden={hidden}>
      <button type="button" className="btn btn-small" data-testid="show-earlier" onClick={onShow}>
        Show earlier messages
      </button>
      <span className="earlier-messages-count muted">
        {next < hidden ? `${next.toLocaleString()} more of ${hidden.toLocaleString()} not shown` : `${hidden.toLocaleString()} not shown`}
      </span>
    </div>
  );
}
