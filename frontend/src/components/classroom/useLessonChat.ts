// useChat wired to the session record: the record on the server is the
// truth, the view follows it after every turn (finish, error, abort), a turn
// already running is reattached, and Stop really stops the server's turn.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import * as api from '../../api';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import { canRegenerate } from '../../core/classroom/messages';
import { answeredQuestionIds, pendingQuestions } from '../../core/classroom/transcript';
import {
  decideRecovery,
  hasUnsentAnswer,
  mayFollow,
  mergeUnsent,
  needsExternalRead,
  withLocalInput,
  withResumeBase,
} from '../../core/classroom/turnContract';
import { turnRequestBody } from '../../core/classroom/turnRequest';
import type { UsageEntry } from '../../core/usage';
import type { ChatModel } from '../../core/types';
import type { QuizResult, AskResult } from '../../core/classroom/questions';
import { createTurnFetch } from './turnClient';

const STOP_SETTLE_POLLS = 24;
const STOP_SETTLE_MS = 250;

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function useLessonChat(initial: api.ChatRecord) {
  const chatId = initial.id;
  const { chats, refreshChats } = useAppState();
  const summary = chats?.find((c) => c.id === chatId);
  const [usage, setUsage] = useState<UsageEntry[]>(initial.usage);
  const [model, setModel] = useState<ChatModel | null>(initial.model);
  const [waiting, setWaiting] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  // The last turn failed while this view was not attached (a reload, another window): the
  // server's memory-only notice, shown as the error banner; Retry, never an automatic re-send.
  const [failure, setFailure] = useState<string | null>(initial.running ? null : (initial.lastFailure?.detail ?? null));
  const failureRef = useRef(failure);
  failureRef.current = failure;
  // The record's copy of the message a reattached turn continues (see withResumeBase).
  const [resumeBase, setResumeBase] = useState<UIMessage | null>(null);

  const answeredHere = useRef(new Set<string>());
  const requestSeq = useRef(0);
  const waitingRef = useRef(false);
  const helpers = useRef<{ setMessages: (m: UIMessage[]) => void; messages: () => UIMessage[] }>({
    setMessages: () => undefined,
    messages: () => [],
  });

  // The record's updatedAt as of the last time we showed it.
  const knownUpdatedAt = useRef(initial.updatedAt);
  const applyRecord = useCallback((record: api.ChatRecord) => {
    knownUpdatedAt.current = record.updatedAt;
    setUsage(record.usage);
    setModel(record.model);
  }, []);

  const transport = useMemo(
    () =>
      new DefaultChatTransport<UIMessage>({
        api: '/api/chat',
        // Only what is new: the server reads the rest from the record (issue 15).
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => ({
          body: turnRequestBody({ id, messages, trigger, messageId, body }),
        }),
        prepareReconnectToStreamRequest: ({ id }) => ({ api: `/api/chats/${encodeURIComponent(id)}/stream` }),
        fetch: createTurnFetch({
          chatId,
          setMessages: (m) => helpers.current.setMessages(m),
          onWaiting: (w) => {
            waitingRef.current = w;
            setWaiting(w);
          },
          onRecord: applyRecord,
          onRequest: (sent) => {
            requestSeq.current++;
            const last = sent?.[sent.length - 1];
            for (const id of answeredQuestionIds(last)) answeredHere.current.delete(id);
          },
        }),
      }),
    [chatId, applyRecord],
  );

  // Re-read the record once a turn settled and show it (also picks up other tabs' turns).
  const settle = useRef<(opts: { error: boolean }) => Promise<void>>(async () => undefined);

  const chat = useChat({
    id: chatId,
    messages: initial.messages,
    transport,
    sendAutomaticallyWhen: ({ messages }) =>
      lastAssistantMessageIsCompleteWithToolCalls({ messages }) && hasUnsentAnswer(messages, answeredHere.current),
    onFinish: ({ isAbort, isError }) => {
      // An abort is settled by stopTurn (it waits for the server to save what streamed).
      if (!isAbort) void settle.current({ error: isError });
    },
  });
  const { messages, setMessages, status, resumeStream, stop, addToolOutput, sendMessage, regenerate, clearError } = chat;

  const messagesRef = useRef(messages);
  messagesRef.current = messages;
  helpers.current = { setMessages, messages: () => messagesRef.current };

  // The running turn this view last followed (its record's updatedAt): the automatic follows
  // (mount, settle after an error, the session row) take each turn once (core mayFollow).
  const followedTurn = useRef<string | null>(null);
  const follow = useCallback(
    (record: api.ChatRecord) => {
      followedTurn.current = record.updatedAt;
      const last = record.messages[record.messages.length - 1];
      setResumeBase(last?.role === 'assistant' ? last : null);
      setMessages(record.messages);
      void resumeStream();
    },
    [setMessages, resumeStream],
  );

  settle.current = async ({ error }) => {
    const seq = requestSeq.current;
    let record: api.ChatRecord;
    try {
      record = await api.getChat(chatId);
    } catch {
      return; // unreachable: keep what we show; the error banner says why
    }
    void refreshChats();
    if (seq !== requestSeq.current) return; // a newer request started meanwhile
    applyRecord(record);
    setResumeBase(null);
    if (error) {
      setMessages(mergeUnsent(record.messages, messagesRef.current));
      if (mayFollow(record, followedTurn.current)) follow(record); // a second failure: the banner
    } else {
      setMessages(record.messages);
      // The turn this view followed failed before any content and its stream was gone by the
      // time we read it (a reattachment answered 204): the server's notice is the news (seed §5).
      if (!record.running && record.lastFailure) setFailure(record.lastFailure.detail);
    }
  };

  // Reattach to a turn that is running (a reload mid-turn, another tab).
  const reattached = useRef(false);
  useEffect(() => {
    if (reattached.current || !initial.running) return;
    reattached.current = true;
    follow(initial);
  }, [initial, follow]);

  // The session list shows running dots: refresh when a turn starts (and once it streams,
  // when the server has certainly registered it).
  const busy = status === 'submitted' || status === 'streaming';
  useEffect(() => {
    if (status === 'submitted' || status === 'streaming') void refreshChats();
  }, [status, refreshChats]);

  // Another tab's turn: the session row says it runs, or it changed since we
  // last showed the record. Re-read it; follow a running turn, else sync.
  const externalSync = useRef(false);
  // A row update that came while a read was in flight: read again once it ends (else a rename or
  // a turn's start that arrived meanwhile would be dropped until the next event).
  const externalDirty = useRef(false);
  const [externalRecheck, setExternalRecheck] = useState(0);
  const statusRef = useRef(status);
  statusRef.current = status;
  useEffect(() => {
    if (externalSync.current) {
      externalDirty.current = true;
      return;
    }
    const view = { idle: !busy, waiting, knownUpdatedAt: knownUpdatedAt.current, followed: followedTurn.current };
    if (!needsExternalRead(summary, view)) return;
    externalSync.current = true;
    const seq = requestSeq.current;
    void api
      .getChat(chatId)
      .then((record) => {
        const idle = statusRef.current !== 'submitted' && statusRef.current !== 'streaming';
        if (seq !== requestSeq.current || !idle) return;
        const changed = record.updatedAt !== knownUpdatedAt.current;
        applyRecord(record);
        if (!record.running && record.lastFailure && changed) setFailure(record.lastFailure.detail);
        if (record.running) {
          if (mayFollow(record, followedTurn.current)) follow(record);
        } else if (changed) {
          setMessages(statusRef.current === 'error' ? mergeUnsent(record.messages, messagesRef.current) : record.messages);
        }
      })
      .catch(() => undefined)
      .finally(() => {
        externalSync.current = false;
        if (externalDirty.current) {
          externalDirty.current = false;
          setExternalRecheck((n) => n + 1);
        }
      });
  }, [summary, busy, waiting, externalRecheck, chatId, applyRecord, follow, setMessages]);

  const send = useCallback(
    (text: string) => {
      setNotice(null);
      setFailure(null);
      void sendMessage({ text });
    },
    [sendMessage],
  );

  /** Write the teacher's last reply again (the server's `regenerate-message`; see canRegenerate). */
  const regenerateLast = useCallback(() => {
    if (!canRegenerate(statusRef.current, messagesRef.current)) return;
    setNotice(null);
    setFailure(null);
    clearError();
    void regenerate();
  }, [regenerate, clearError]);

  const answer = useCallback(
    (tool: 'quiz' | 'ask_user_question', toolCallId: string, output: QuizResult | AskResult) => {
      setNotice(null);
      const uncertain = statusRef.current === 'error' || failureRef.current !== null;
      setFailure(null);
      const submit = () => {
        answeredHere.current.add(toolCallId);
        void addToolOutput({ tool, toolCallId, output });
      };
      if (!uncertain) {
        submit();
        return;
      }
      // After a failure the view may be behind: reconcile with the record (and a running turn)
      // before sending, so an answer the server already took is never sent again.
      clearError();
      void api
        .getChat(chatId)
        .then((record) => {
          applyRecord(record);
          const stillPending = pendingQuestions(record.messages).some((q) => q.part.toolCallId === toolCallId);
          if (record.running) follow(record);
          else if (!stillPending) setMessages(record.messages);
          else submit();
        })
        .catch((err: unknown) => setNotice(`Could not reach the server: ${describeError(err).detail}`));
    },
    [addToolOutput, chatId, applyRecord, follow, setMessages, clearError],
  );

  /** Stop: abort our request AND the server's turn (a dropped connection does not stop it). */
  const stopTurn = useCallback(async () => {
    if (waitingRef.current) {
      await stop(); // only our wait: the other turn is not ours to stop
      return;
    }
    const abort = () =>
      api.abortTurn(chatId).catch((err: unknown) => {
        setNotice(`Could not stop the turn on the server: ${describeError(err).detail}`);
        return null;
      });
    await Promise.all([stop(), abort()]);
    // The server saves what streamed once its turn has ended. A turn that
    // started after the abort (our request was still on its way) is aborted too.
    let record: api.ChatRecord | null = null;
    for (let i = 0; i < STOP_SETTLE_POLLS; i++) {
      try {
        record = await api.getChat(chatId);
      } catch {
        record = null;
      }
      if (record && !record.running) break;
      if (record?.running && i % 4 === 3) await abort();
      await pause(STOP_SETTLE_MS);
    }
    void refreshChats();
    if (!record) return;
    applyRecord(record);
    setResumeBase(null);
    setMessages(record.messages);
  }, [chatId, stop, setMessages, applyRecord, refreshChats]);

  /** Retry after an error: re-read the record first, never re-send blindly. */
  const retry = useCallback(async () => {
    clearError();
    setNotice(null);
    setFailure(null);
    let record: api.ChatRecord;
    try {
      record = await api.getChat(chatId);
    } catch (err) {
      setNotice(describeError(err).detail);
      return;
    }
    applyRecord(record);
    const local = messagesRef.current;
    const decision = decideRecovery(record, local);
    if (decision.kind === 'sync') {
      setMessages(record.messages);
      return;
    }
    if (decision.kind === 'follow') {
      follow(record);
      return;
    }
    const next = decision.kind === 'resend' ? decision.messages : withLocalInput(record.messages, local);
    setMessages(next);
    const last = next[next.length - 1];
    if (last?.role === 'assistant') await sendMessage(); // the answers, continuing that message
    else await regenerate(); // the learner's message (the server takes an unanswered one again)
  }, [chatId, clearError, setMessages, applyRecord, follow, sendMessage, regenerate]);

  const view = useMemo(() => withResumeBase(messages, resumeBase), [messages, resumeBase]);

  return {
    messages: view,
    status,
    busy,
    error: chat.error,
    clearError,
    waiting,
    notice,
    clearNotice: () => setNotice(null),
    failure,
    clearFailure: () => setFailure(null),
    usage,
    model,
    setModel,
    send,
    answer,
    stopTurn,
    retry,
    regenerateLast,
  };
}
