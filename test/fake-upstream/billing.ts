// The hostile vendor of the money tests: it bills the o200k tokens of every string and key it
// is sent, whatever field holds them, so that text the gateway forwards but does not expect to
// be read (a schema's examples, an unknown field, a tool's property names) is billed all the
// same. Images are billed as images where the dialect puts them, never as their bytes.

import { countTokens } from 'gpt-tokenizer';
import type { Dialect } from './scenarios.js';

/** What the fake bills an image at: below any model's most, as a real vendor's would be. */
export const FAKE_IMAGE_TOKENS = 1000;

function imagePayloads(body: any, dialect: Dialect): Map<object, string> {
  const out = new Map<object, string>();
  if (dialect === 'gemini') {
    for (const c of Array.isArray(body?.contents) ? body.contents : []) {
      for (const p of Array.isArray(c?.parts) ? c.parts : []) {
        const inline = p?.inlineData;
        if (inline && typeof inline.mimeType === 'string' && inline.mimeType.startsWith('image/'))
          out.set(inline, 'data');
      }
    }
    return out;
  }
  if (dialect === 'responses') {
    for (const item of Array.isArray(body?.input) ? body.input : []) {
      for (const part of Array.isArray(item?.content) ? item.content : [])
        if (part?.type === 'input_image') out.set(part, 'image_url');
    }
    return out;
  }
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    if (!Array.isArray(m?.content)) continue;
    const blocks = [...m.content];
    for (const b of m.content) if (b?.type === 'tool_result' && Array.isArray(b.content)) blocks.push(...b.content);
    for (const b of blocks) {
      if (dialect === 'openai' && b?.type === 'image_url') {
        if (typeof b.image_url === 'string') out.set(b, 'image_url');
        else if (b.image_url && typeof b.image_url === 'object') out.set(b.image_url, 'url');
      } else if (dialect === 'anthropic' && b?.type === 'image' && b.source && typeof b.source === 'object') {
        out.set(b.source, typeof b.source.data === 'string' ? 'data' : 'url');
      }
    }
  }
  return out;
}

export function everyStringTokens(body: unknown, dialect: Dialect): number {
  const images = imagePayloads(body, dialect);
  let tokens = images.size * FAKE_IMAGE_TOKENS;
  const visit = (x: unknown): void => {
    if (typeof x === 'string') tokens += countTokens(x);
    else if (Array.isArray(x)) x.forEach(visit);
    else if (x !== null && typeof x === 'object') {
      const skip = images.get(x);
      for (const [k, v] of Object.entries(x)) {
        tokens += countTokens(k);
        if (k !== skip) visit(v);
      }
    }
  };
  visit(body);
  return Math.max(1, tokens);
}
