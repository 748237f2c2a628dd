// The clients whose defaults speak the Responses API, unchanged but for a base URL and a key:
// the Vercel AI SDK's default OpenAI provider (generate, stream, a tool round) and the OpenAI
// Agents SDK's default model (a tool round), on a chat, an Anthropic and a Responses upstream.

import t from 'tap';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool as aiTool } from 'ai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { responsesUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const catalogue = testCatalogue({ upstream: fake.url, extra: responsesUpstream(fake.url) });
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const u = await gw.user('5');
const MODELS = ['oa-model', 'an-model', 'rs-model'];

t.test('AI SDK: the default provider model generates, streams and runs a tool round', async (t) => {
  const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key });
  for (const id of MODELS) {
    fake.reset();
    const plain = await generateText({ model: openai(id), prompt: 'hello' });
    t.equal(plain.text, TEXT_ANSWER, `${id}: generateText`);
    t.ok(fake.requests.length === 1, 'one upstream request');
    const streamed = streamText({ model: openai(id), prompt: 'stream please' });
    let text = '';
    for await (const piece of streamed.textStream) text += piece;
    t.equal(text, TEXT_ANSWER, `${id}: streamText`);
    let ran = 0;
    const withTool = await generateText({
      model: openai(id),
      prompt: 'weather? [[tool_round]]',
      tools: {
        get_weather: aiTool({
          description: 'The weather in a city',
          inputSchema: jsonSchema<{ city: string }>({
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
          }),
          execute: async ({ city }) => {
            ran++;
            return { city, temp: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    t.equal(ran, 1, `${id}: the tool ran once`);
    t.equal(withTool.text, TEXT_ANSWER, `${id}: and the answer came after it`);
  }
});

t.test('Agents SDK: the default model runs a tool round', async (t) => {
  setTracingDisabled(true);
  // The Agents SDK brings its own copy of the openai package: the same class, another module.
  setDefaultOpenAIClient(
    new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 }) as unknown as Parameters<
      typeof setDefaultOpenAIClient
    >[0],
  );
  for (const id of MODELS) {
    let ran = 0;
    const getWeather = agentTool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
      strict: true,
      execute: async (input: unknown) => {
        ran++;
        return `21 degrees in ${(input as { city: string }).city}`;
      },
    });
    const agent = new Agent({
      name: 'weather',
      instructions: 'Answer about the weather.',
      model: id,
      tools: [getWeather],
    });
    const result = await run(agent, 'weather in Paris? [[tool_round]]');
    t.equal(ran, 1, `${id}: the agent ran the tool`);
    t.equal(result.finalOutput, TEXT_ANSWER, `${id}: then answered`);
  }
});
