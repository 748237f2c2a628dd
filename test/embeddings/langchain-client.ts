// LangChain's OpenAIEmbeddings against the gateway, in a process of its own: tap's TypeScript
// loader cannot resolve @langchain/openai's imports of the openai package (it looks for
// `….js.mjs`), while Node with tsx can. Run by clients.test.ts as
//   node --import tsx test/embeddings/langchain-client.ts
// with GATEWAY_URL and KEY set; prints one JSON line of the vectors it got.

import { OpenAIEmbeddings } from '@langchain/openai';

const configuration = { baseURL: `${process.env.GATEWAY_URL}/v1` };
const apiKey = process.env.KEY!;
const plain = new OpenAIEmbeddings({ model: 'emb-model', apiKey, configuration, maxRetries: 0 });
const query = await plain.embedQuery('what is a fox?');
const documents = await plain.embedDocuments(['first document', 'second\ndocument']);
const gemini = new OpenAIEmbeddings({ model: 'emb-gemini', apiKey, configuration, dimensions: 5, maxRetries: 0 });
const geminiQuery = await gemini.embedQuery('gemini via langchain');
process.stdout.write(JSON.stringify({ query, documents, geminiQuery }) + '\n');
