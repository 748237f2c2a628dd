// IR → a generateContent body for a Gemini upstream. The model and streaming go in the URL
// (upstream.ts), the output cap in generationConfig.maxOutputTokens (setOutputCap).
//
// Gemini 3 refuses a history whose function calls lack their thoughtSignature. Calls made by
// another vendor, or whose signature a client of another dialect could not keep, carry the
// value Google documents for that case (ai.google.dev/gemini-api/docs/thought-signatures, FAQ),
// which turns the check off for that call; other models ignore it.

import type { IRContent, IRRequest } from '../ir.js';

export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/** Thinking budgets for a reasoning effort (Gemini 2.5's scale: up to 24,576 on Flash, 32,768 on Pro). */
const BUDGETS: Record<string, number> = { minimal: 512, low: 1024, medium: 8192, high: 24576 };

type Part = Record<string, unknown>;

function toolResultResponse(c: Extract<IRContent, { type: 'tool_result' }>): Record<string, unknown> {
  const text =
    typeof c.content === 'string'
      ? c.content
      : c.content.flatMap((x) => (x.type === 'text' ? [x.text] : [])).join('\n');
  return c.isError ? { error: text } : { output: text };
}

export function buildRequest(ir: IRRequest, _upstreamModel: string): Record<string, unknown> {
  const names = new Map<string, string>();
  const contents: { role: string; parts: Part[] }[] = [];
  const push = (role: string, part: Part) => {
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(part);
    else contents.push({ role, parts: [part] });
  };
  for (const msg of ir.messages) {
    const role = msg.role === 'assistant' ? 'model' : 'user';
    let signed = false;
    for (const c of msg.content) {
      switch (c.type) {
        case 'text':
          push(role, { text: c.text });
          break;
        case 'image':
          push(
            role,
            c.source.kind === 'base64'
              ? { inlineData: { mimeType: c.source.mediaType, data: c.source.data } }
              : { fileData: { mimeType: guessImageType(c.source.url), fileUri: c.source.url } },
          );
          break;
        case 'thinking':
          // Thoughts go back only with their signature: without one they are another vendor's words.
          if (c.signature) push(role, { text: c.thinking, thought: true, thoughtSignature: c.signature });
          break;
        case 'tool_use': {
          names.set(c.id, c.name);
          const part: Part = { functionCall: { id: c.id, name: c.name, args: c.input ?? {} } };
          // Of parallel calls only the first carries a signature, as Gemini answers them.
          if (c.signature) part.thoughtSignature = c.signature;
          else if (!signed && !msg.content.some((x) => x.type === 'tool_use' && x.signature))
            part.thoughtSignature = SKIP_SIGNATURE;
          signed = true;
          push('model', part);
          break;
        }
        case 'tool_result':
          push('user', {
            functionResponse: {
              id: c.toolUseId,
              name: names.get(c.toolUseId) ?? 'tool',
              response: toolResultResponse(c),
            },
          });
          break;
        // Redacted thinking is Anthropic's own.
      }
    }
  }
  const body: Record<string, unknown> = { contents };
  if (ir.system.length > 0) body.systemInstruction = { parts: [{ text: ir.system.join('\n\n') }] };
  if (ir.tools && ir.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: ir.tools.map((t) => ({
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          parametersJsonSchema: t.parameters,
        })),
      },
    ];
    const choice = ir.toolChoice;
    if (choice) {
      const mode = choice.type === 'auto' ? 'AUTO' : choice.type === 'none' ? 'NONE' : 'ANY';
      body.toolConfig = {
        functionCallingConfig: { mode, ...(choice.type === 'tool' ? { allowedFunctionNames: [choice.name] } : {}) },
      };
    }
  }
  const gen: Record<string, unknown> = {};
  if (ir.maxTokens !== undefined) gen.maxOutputTokens = ir.maxTokens;
  if (ir.temperature !== undefined) gen.temperature = ir.temperature;
  if (ir.topP !== undefined) gen.topP = ir.topP;
  if (ir.stop && ir.stop.length > 0) gen.stopSequences = ir.stop.slice(0, 5);
  const wanted =
    ir.thinking?.budgetTokens ??
    (ir.reasoningEffort === 'none' ? 0 : ir.reasoningEffort ? BUDGETS[ir.reasoningEffort] : undefined);
  if (wanted !== undefined) {
    // Thoughts are output tokens inside the cap: the budget never raises what was reserved for.
    const budget = ir.maxTokens !== undefined ? Math.min(wanted, Math.max(0, ir.maxTokens - 1)) : wanted;
    gen.thinkingConfig = budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: 0 };
  }
  if (Object.keys(gen).length > 0) body.generationConfig = gen;
  return body;
}

function guessImageType(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return ext === 'png' ? 'image/png' : ext === 'webp' ? 'image/webp' : ext === 'gif' ? 'image/gif' : 'image/jpeg';
}
