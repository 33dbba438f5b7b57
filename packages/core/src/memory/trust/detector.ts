/**
 * The injection detector: deterministic rules that say whether a text reads like instructions to a model
 * rather than information about the user. Each rule has a weight; a text whose fired weights add up to
 * `INJECTION_THRESHOLD` or more is flagged. The verdict names every rule that fired and the text it
 * matched, so a quarantined memory always says why.
 */

export interface InjectionRule {
  /** Stable id, shown in quarantine marks (`ignore-instructions`, `role-marker`, …). */
  readonly id: string;
  readonly weight: number;
  /** What the rule looks for, in words. */
  readonly description: string;
  readonly pattern: RegExp;
}

export interface RuleHit {
  rule: string;
  weight: number;
  /** The matched text, cut to 80 characters. */
  evidence: string;
}

export interface InjectionVerdict {
  flagged: boolean;
  score: number;
  hits: RuleHit[];
}

export interface DetectOptions {
  /**
   * What the user typed in the same exchange. A hit whose evidence the user wrote themselves (their own
   * URL, address or wording) does not count: "remember to send reports to me@x.org" is the user's wish.
   */
  userText?: string;
}

/** The score at which a text is flagged. */
export const INJECTION_THRESHOLD = 3;

const URL_OR_EMAIL = String.raw`(?:https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)`;
/** Verbs that move data somewhere, as an order (`SEND`) and as a participle (`SENT`). */
const SEND = String.raw`(?:send|forward|post|upload|e-?mail|transmit|leak|exfiltrate|copy|cc|bcc|report|submit|deliver)`;
const SENT = String.raw`(?:sent|sending|forward(?:ed|ing)|post(?:ed|ing)|upload(?:ed|ing)|e-?mail(?:ed|ing)|transmitted|leaked|exfiltrated|copied|reported|submitted|delivered)`;

export const INJECTION_RULES: readonly InjectionRule[] = Object.freeze([
  {
    id: 'ignore-instructions',
    weight: 3,
    description: 'tells the model to ignore, forget or override its instructions',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|your|the|system|original)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|context)\b/i,
  },
  {
    id: 'role-marker',
    weight: 3,
    description: 'a chat-template or role marker (system:, <|im_start|>, [INST], <<SYS>>, <system>)',
    pattern:
      /(?:<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|eot_id)\|>|\[\/?INST\]|<<\/?SYS>>|<\/?(?:system|instructions?)>|(?:^|\n|[:.!?]\s)\s*#{0,3}\s*(?:system|developer)\s*(?:prompt|message)?\s*:)/i,
  },
  {
    id: 'tool-call-json',
    weight: 3,
    description: 'a tool or function call written as JSON',
    pattern:
      /"(?:tool_calls|function_call|tool_use)"\s*:|"(?:name|tool|function)"\s*:\s*"[\w.-]+"\s*,\s*"(?:arguments|parameters|args|input)"\s*:/i,
  },
  {
    id: 'exfiltration-order',
    weight: 3,
    description:
      'orders (or says the user wants) something sent, forwarded or uploaded to a URL or e-mail address',
    pattern: new RegExp(
      String.raw`(?:(?:^|[.!?:;,]\s*|\n)(?:please\s+|also\s+|then\s+|and\s+|always\s+|(?:the\s+)?(?:assistant|ai|model|agent|you)\s+(?:must|should|will|shall)\s+(?:always\s+)?)*${SEND}|\b(?:wants?|asks?|would like)\b[^.\n]{0,40}?\b${SENT})\b[^\n]{0,80}?\b(?:to|at|into)\s+${URL_OR_EMAIL}`,
      'i',
    ),
  },
  {
    id: 'exfiltration',
    weight: 2,
    description: 'mentions sending, forwarding or uploading something to a URL or e-mail address',
    pattern: new RegExp(
      String.raw`\b(?:${SEND}|${SENT})\b[^\n]{0,80}?\b(?:to|at|into)\s+${URL_OR_EMAIL}`,
      'i',
    ),
  },
  {
    id: 'markdown-exfiltration',
    weight: 3,
    description: 'a markdown image or link whose URL carries data in its query string',
    pattern: /!\[[^\]]*\]\(\s*https?:\/\/[^)\s]*\?[^)\s]*=/i,
  },
  {
    id: 'prompt-leak',
    weight: 3,
    description: 'asks to reveal the system prompt or instructions',
    pattern:
      /\b(?:reveal|print|show|repeat|output|leak|dump|tell me)\b[^.\n]{0,30}?\b(?:system prompt|initial prompt|hidden prompt|your (?:instructions|prompt|rules))\b/i,
  },
  {
    id: 'new-instructions',
    weight: 2,
    description: 'announces new instructions or a new role for the model',
    pattern:
      /\b(?:new|updated|real|actual|additional|important|hidden|secret) (?:instructions?|system prompt|directives?|orders)\b|\byou (?:are|must) now\b|\bfrom now on,? you\b|\byour new (?:role|task|goal|instructions?)\b/i,
  },
  {
    id: 'addressed-to-model',
    weight: 2,
    description: 'speaks to the AI itself (“AI assistant: you must …”, “note to the model”)',
    pattern:
      /\b(?:(?:dear|attention|note to (?:the)?)\s*(?:ai|llm|assistant|model|agent|chatbot)s?\b|(?:ai|llm|language model|assistant|agent)s?,? (?:reading this|you (?:must|should|will|are instructed)))/i,
  },
  {
    id: 'always-rule',
    weight: 1,
    description: 'an unconditional standing order (always / never / whenever … you)',
    pattern:
      /\b(?:always|never|whenever|every time)\b[^.\n]{0,40}?\byou\b|\byou (?:must|should|will) (?:always|never)\b/i,
  },
  {
    id: 'persist-memory',
    weight: 2,
    description: 'asks the model to write something into its memory',
    pattern:
      /\b(?:save|store|write|add|keep) (?:this|that|it|the following)\b[^.\n]{0,30}?\b(?:memory|memories)\b|\b(?:permanent|long-term) memory\b/i,
  },
  {
    id: 'credentials',
    weight: 2,
    description: 'asks for passwords, API keys, tokens or private keys',
    pattern:
      /\b(?:send|share|reveal|include|output|print|give|paste|provide)\b[^.\n]{0,40}?\b(?:passwords?|api[ _-]?keys?|access tokens?|credentials|private keys?|ssh keys?|secret keys?)\b/i,
  },
  {
    id: 'jailbreak',
    weight: 2,
    description: 'a known jailbreak phrase (DAN, developer mode, do anything now)',
    pattern:
      /\b(?:do anything now|developer mode|jailbreak|DAN mode|no (?:restrictions|filters|guidelines))\b/i,
  },
  {
    id: 'hidden-text',
    weight: 2,
    description: 'invisible characters (Unicode tag characters, zero-width runs) or an HTML comment',
    pattern: /[\u{E0000}-\u{E007F}]|[\u200B-\u200D\u2060\uFEFF]{2,}|<!--[\s\S]{0,2000}?-->/u,
  },
]);

/** Runs every rule over `text` and adds up the weights of those that fired. */
export function detectInjection(text: string, options: DetectOptions = {}): InjectionVerdict {
  const userText = options.userText?.toLowerCase();
  const hits: RuleHit[] = [];
  for (const rule of INJECTION_RULES) {
    const match = rule.pattern.exec(text);
    if (!match) continue;
    if (userText !== undefined && typedByUser(match[0], userText)) continue;
    hits.push({ rule: rule.id, weight: rule.weight, evidence: match[0].trim().slice(0, 80) });
  }
  const score = hits.reduce((sum, hit) => sum + hit.weight, 0);
  return { flagged: score >= INJECTION_THRESHOLD, score, hits };
}

/** The user wrote it: the match's URL or address, or the whole match, appears in what they typed. */
function typedByUser(matched: string, userText: string): boolean {
  const lower = matched.toLowerCase();
  if (userText.includes(lower.trim())) return true;
  const targets = lower.match(new RegExp(URL_OR_EMAIL, 'gi'));
  if (targets === null) return false;
  return targets.every((target) => userText.includes(target.replace(/[.,;:!?)]+$/, '')));
}
