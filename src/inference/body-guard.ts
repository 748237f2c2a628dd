// Structural limits on an inference body, checked on the raw bytes before JSON.parse, so that a
// body built to be expensive (hundreds of thousands of tiny messages, deep nesting) is refused
// for the price of one pass over its bytes instead of costing a parse, a validation and a
// translation. The limits are named in the error.

import { GatewayError } from '../errors.js';

export interface BodyLimits {
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
  /** Objects and arrays in the whole body (messages, content parts, tools, schema nodes). */
  maxContainers: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const OPEN_ARR = 0x5b;
const CLOSE_OBJ = 0x7d;
const CLOSE_ARR = 0x5d;

/** Work done between two yields to the event loop: bytes scanned, plus a cost per string. */
const SLICE = 1 << 20;

// Steps of large bodies waiting for their turn: one step a turn of the event loop, whatever the
// body. With a plain setImmediate, every body's next step ran in the same turn, back to back:
// four 15 MB bodies held the loop 260 ms at a stretch, where one held it 70.
const waiting: (() => void)[] = [];
let releasing = false;

function releaseOne(): void {
  const next = waiting.shift();
  // Scheduled from inside an immediate, the next release runs a turn later, after the I/O.
  if (waiting.length > 0) setImmediate(releaseOne);
  else releasing = false;
  next?.();
}

/** Resolves in a later turn of the event loop, after the I/O due, and after the steps queued before it. */
function yieldToLoop(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!releasing) {
      releasing = true;
      setImmediate(releaseOne);
    }
  });
}

/**
 * The body's JSON, with the event loop free before the text is decoded and before it is parsed:
 * for a body of megabytes each step is tens of milliseconds that other requests do not wait
 * behind all at once. Throws a SyntaxError as JSON.parse does.
 */
export async function parseJsonBody(body: Buffer): Promise<unknown> {
  if (body.length <= SLICE) return JSON.parse(body.toString('utf8'));
  await yieldToLoop();
  const text = body.toString('utf8');
  await yieldToLoop();
  return JSON.parse(text);
}

/**
 * Throws a 400 naming the limit when `body` nests deeper or holds more containers than allowed;
 * else answers how many containers it has (the hold counts them). A large body is scanned in
 * slices with the event loop free in between, so other requests (and /healthz) are not held up.
 */
export async function checkBodyShape(body: Buffer, limits: BodyLimits): Promise<number> {
  let depth = 0;
  let containers = 0;
  let work = 0;
  let inString = false;
  let i = 0;
  while (i < body.length) {
    if (inString) {
      // Jump from quote to quote; only the backslashes right before a quote matter.
      const q = body.indexOf(QUOTE, i);
      if (q === -1) return containers; // unterminated: JSON.parse reports it
      let backslashes = 0;
      for (let j = q - 1; body[j] === BACKSLASH; j--) backslashes++;
      if (backslashes % 2 === 0) inString = false;
      work += q - i + 64;
      i = q + 1;
    } else {
      const c = body[i++]!;
      work++;
      if (c === QUOTE) inString = true;
      else if (c === OPEN_OBJ || c === OPEN_ARR) {
        if (++depth > limits.maxDepth) {
          throw new GatewayError(
            'invalid_request',
            `The request body nests objects and arrays more than ${limits.maxDepth} levels deep (MAX_JSON_DEPTH).`,
            { code: 'body_too_deep' },
          );
        }
        if (++containers > limits.maxContainers) {
          throw new GatewayError(
            'invalid_request',
            `The request body holds more than ${limits.maxContainers} objects and arrays (MAX_JSON_CONTAINERS).`,
            { code: 'body_too_complex' },
          );
        }
      } else if (c === CLOSE_OBJ || c === CLOSE_ARR) depth--;
    }
    if (work >= SLICE) {
      work = 0;
      await yieldToLoop();
    }
  }
  return containers;
}
