import path from 'node:path';
import { createInterface } from 'node:readline';
import {
  type BackgroundEvent,
  type ChatModel,
  type Conversation,
  isKiokuError,
  type Kioku,
  type Scope,
  type TurnLedger,
} from '@kioku/core';
import { isKiokuSession } from '@kioku/core/store';
import type { OpenAIChatModel } from '@kioku/openai';
import type { TurnRunner } from './ai-sdk-turns.js';
import { forgottenCommand } from './forgotten.js';
import {
  describeToolTraffic,
  exportUser,
  forgetUser,
  formatLedger,
  importUser,
  showFacts,
  showPlan,
  showRefs,
  showWorking,
} from './inspect.js';
import { learnDocument, showDocuments } from './knowledge.js';
import { applyDream, describeBackground, listChangesets, revertChangeset, reviewDream } from './lifecycle.js';
import { quarantineCommand } from './quarantine.js';
import type { DemoStores } from './stack.js';
import { describeVectors, mismatchAdvice, rebuildVectors, type Vectors } from './vectors.js';

export const HELP = `Commands:
  /facts           facts remembered about you
  /plan            this conversation's plan
  /working         working memory (scratch notes with expiry)
  /refs            offloaded tool outputs ([MemoryRef: …])
  /learn <src>     learn a document: a path in the sandbox or an http(s) URL
  /docs            documents you taught the agent
  /reembed         rebuild your vectors with the configured embedding model
  /dream           let the model tidy your memory: shows the changes, then "/dream apply" applies them
  /changesets      every change a memory pass made or proposed, with its id and status
  /revert <id>     undo a changeset exactly
  /quarantine      memories held back because they read like instructions: list | confirm <id> | undo <id> | drop <id>
  /forgotten       forgotten facts that stay forgotten: list | fact <id> (forget one) | revoke <hash>
  /feedback <text> tell the agent it got something wrong (the dream learns anti-patterns from it)
  /ledger          last turn's prompt: tokens per memory kind
  /export <file>   write a snapshot of your memory
  /import <file>   restore a snapshot written by /export
  /forget yes      delete your memory (asks first)
  /help            this list
  /quit            leave (Ctrl-D works too)`;

export interface ChatOptions {
  kioku: Kioku;
  stores: DemoStores;
  scope: Scope;
  model: OpenAIChatModel;
  /** The model of background memory work (the dream); the chat model unless a cheaper one is given. */
  memoryModel: ChatModel;
  /** Background events since the last turn (filled by the builder's `onEvent`), printed after each turn. */
  background: BackgroundEvent[];
  /** Runs the turns through an agent framework instead of `conversation.run` (`--framework`). */
  turns?: TurnRunner;
  resume: boolean;
  /** The folder the file tools and /learn may read. */
  sandbox: string;
  /** The data folder: relative /export and /import paths are resolved in it. */
  dataDir: string;
  /** The embedder and vector index behind the hybrid stores; none when embeddings are off. */
  vectors: Vectors | undefined;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** The interactive chat: one line per turn, streamed answers, slash commands to look inside memory. */
export async function chat(options: ChatOptions): Promise<void> {
  const { kioku, stores, scope, model } = options;
  const out = options.output ?? process.stdout;
  const input = options.input ?? process.stdin;
  const tty = (input as { isTTY?: boolean }).isTTY === true;
  const print = (text: string) => out.write(`${text}\n`);

  let conversation: Conversation;
  // The latest conversation; the sessions Kioku keeps for itself (changesets, feedback, …) are not ones.
  const latest = options.resume
    ? (await stores.sessions.list(scope)).filter((s) => !isKiokuSession(s)).at(-1)
    : undefined;
  if (latest) {
    conversation = await kioku.resumeConversation(scope, latest.id);
    print(`Resumed session ${latest.id}.`);
  } else {
    conversation = await kioku.startConversation(scope);
  }
  print(`Kioku demo agent — model ${model.model} at ${model.client.baseURL}`);
  if (options.turns) print(`Turns run by ${options.turns.label}.`);
  print(describeVectors(options.vectors));
  print(`User ${scope.userId}, session ${conversation.sessionId}. Type /help for commands.\n`);

  let lastLedger: TurnLedger | undefined;
  // The changesets the last /dream proposed, for "/dream apply".
  let proposed: string[] = [];
  let turn: AbortController | undefined;
  const rl = createInterface({ input, terminal: tty, ...(tty ? { output: out } : {}) });
  // Ctrl-C cancels the turn in progress; between turns it leaves (stores are closed on the way out).
  // A TTY readline reports it as its own SIGINT event, a pipe as the process signal.
  const onSigint = () => {
    if (turn) turn.abort();
    else rl.close();
  };
  rl.on('SIGINT', onSigint);
  process.on('SIGINT', onSigint);
  const prompt = () => {
    if (tty) out.write('you › ');
  };
  prompt();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === '') {
        prompt();
        continue;
      }
      if (!tty) print(`you › ${line}`);
      if (line.startsWith('/')) {
        const [command = '', ...rest] = line.split(/\s+/);
        const arg = rest.join(' ');
        try {
          if (command === '/quit' || command === '/exit') break;
          const reply = await runCommand(command, arg);
          print(reply);
          if (command === '/forget' || command === '/import') {
            // The session may be gone (forgotten, or replaced by the imported sessions): the chat goes on.
            conversation = await continueConversation(kioku, scope, conversation.sessionId);
          }
        } catch (error) {
          print(`error: ${describeError(error)}${adviceFor(error)}`);
        }
        prompt();
        continue;
      }
      turn = new AbortController();
      out.write('kioku › ');
      try {
        let streamed = false;
        const turnOptions = {
          signal: turn.signal,
          onToken: (text: string) => {
            streamed = true;
            out.write(text);
          },
        };
        const result = options.turns
          ? await options.turns.run(conversation, line, turnOptions)
          : await conversation.run(line, model, turnOptions);
        if (!streamed) out.write(result.answer);
        out.write('\n');
        for (const l of describeToolTraffic(result.messages)) print(l);
        // Extraction and enrichment run after the reply; the demo waits for them to show what they did.
        await kioku.flush();
        for (const l of describeBackground(options.background.splice(0))) print(l);
        if (result.stepLimitReached) print('(stopped at the step limit with tool calls pending)');
        lastLedger = result.ledger;
      } catch (error) {
        print(`\nerror: ${describeError(error)} (the turn so far is kept in the session)${adviceFor(error)}`);
      } finally {
        turn = undefined;
      }
      prompt();
    }
  } finally {
    process.off('SIGINT', onSigint);
    rl.close();
  }

  async function runCommand(command: string, arg: string): Promise<string> {
    switch (command) {
      case '/dream': {
        if (arg === 'apply') {
          const applied = await applyDream(kioku, scope, proposed);
          proposed = [];
          return applied;
        }
        const review = await reviewDream(kioku, scope, options.memoryModel);
        proposed = review.proposed;
        return review.text;
      }
      case '/changesets':
        return listChangesets(kioku, scope);
      case '/revert':
        if (!arg) return 'Usage: /revert <changeset id> (see /changesets)';
        return revertChangeset(kioku, scope, arg);
      case '/quarantine':
        return quarantineCommand(kioku, scope, arg);
      case '/forgotten':
        return forgottenCommand(kioku, scope, arg);
      case '/feedback':
        if (!arg) return 'Usage: /feedback <what the agent got wrong>';
        await kioku.recordFeedback(scope, {
          kind: 'correction',
          text: arg,
          sessionId: conversation.sessionId,
        });
        return 'Thanks — noted as a correction; the next /dream turns it into an anti-pattern to avoid.';
      case '/help':
        return HELP;
      case '/facts':
        return showFacts(stores, scope);
      case '/plan':
        return showPlan(stores, scope, conversation.sessionId);
      case '/working':
        return showWorking(stores, scope);
      case '/refs':
        return showRefs(stores, scope);
      case '/learn':
        if (!arg) return 'Usage: /learn <path-in-sandbox-or-http(s)-url>';
        return learnDocument(stores.documents, scope, options.sandbox, arg);
      case '/docs':
        return showDocuments(stores.documents, scope);
      case '/reembed':
        if (!options.vectors) return 'Embeddings are off: there are no vectors to rebuild.';
        return rebuildVectors(stores, options.vectors, scope.userId);
      case '/ledger':
        return formatLedger(lastLedger);
      case '/export':
        if (!arg) return 'Usage: /export <file> (relative paths are in the data folder)';
        return exportUser(stores, scope.userId, path.resolve(options.dataDir, arg));
      case '/import':
        if (!arg) return 'Usage: /import <file> (relative paths are in the data folder)';
        return importUser(stores, scope.userId, path.resolve(options.dataDir, arg));
      case '/forget':
        if (arg !== 'yes') {
          return 'This erases all of your memory (facts, documents, sessions, plans, working memory, details, vectors). Type "/forget yes" to go ahead.';
        }
        return forgetUser(kioku, scope.userId);
      default:
        return `Unknown command ${command}. ${HELP}`;
    }
  }
}

/** The session `sessionId` if it still exists, else a new one (after /forget or an /import that replaced it). */
export async function continueConversation(kioku: Kioku, scope: Scope, sessionId: string) {
  try {
    return await kioku.resumeConversation(scope, sessionId);
  } catch (error) {
    if (isKiokuError(error) && error.code === 'NOT_FOUND') return kioku.startConversation(scope);
    throw error;
  }
}

export function describeError(error: unknown): string {
  if (isKiokuError(error)) {
    const status = typeof error.details.status === 'number' ? ` HTTP ${error.details.status}` : '';
    return `${error.code}${status} — ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** What the user can do about an error, on a line of its own (or nothing). */
export function adviceFor(error: unknown): string {
  const advice = mismatchAdvice(error);
  return advice ? `\n  ${advice}` : '';
}
