// The Responses surface answers errors in OpenAI's envelope (`{"error":{message,type,param,code}}`);
// mid-stream, as the API does, with an `error` event followed by `response.failed`.

import type { GatewayError } from '../../errors.js';
import { markFinal } from '../../stream/sse.js';
import { errorBody } from '../openai/errors.js';

export { errorResponse, upstreamErrorMessage } from '../openai/errors.js';

const event = (type: string, payload: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

/** An error once the stream has begun: `error`, then the terminal `response.failed`. */
export function failureEvents(
  id: string,
  err: { kind: GatewayError['kind']; message: string; param?: string | null; code?: string | null },
  sequence: number,
): Buffer {
  const { error } = errorBody(err.kind, err.message, err.param, err.code);
  const text =
    event('error', {
      code: error.code ?? error.type,
      message: error.message,
      param: error.param,
      sequence_number: sequence,
    }) +
    event('response.failed', {
      response: {
        id,
        object: 'response',
        status: 'failed',
        error: { code: error.code ?? error.type, message: error.message },
        output: [],
        usage: null,
      },
      sequence_number: sequence + 1,
    });
  return markFinal(Buffer.from(text));
}

export function errorEvent(err: GatewayError, requestId: string): Buffer {
  return failureEvents(`resp_${requestId}`, err, 0);
}
