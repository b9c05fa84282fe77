// What the learner chose or wrote in a question, kept in memory by toolCallId (seed §5: "submitted
// question drafts survive optimistic unmount"). The dock unmounts a question as soon as it is
// submitted; when the answer is not accepted (the request failed, the server was unreachable) the
// question comes back with the draft as it was. In memory only: a reload starts afresh.

export interface QuestionDraft {
  chosen?: number | null;
  text?: string;
}

const drafts = new Map<string, QuestionDraft>();
/** How many questions' drafts are kept; past it the oldest question's draft is forgotten. */
export const MAX_DRAFTS = 200;

export function draftOf(toolCallId: string): QuestionDraft {
  return { ...drafts.get(toolCallId) }; // a copy: what a caller does with it changes nothing kept
}

export function keepDraft(toolCallId: string, update: QuestionDraft): void {
  drafts.set(toolCallId, { ...drafts.get(toolCallId), ...update });
  if (drafts.size > MAX_DRAFTS) drafts.delete(drafts.keys().next().value as string);
}
