// Drives the AI SDK's embedMany (ai with @ai-sdk/openai) and LangChain's
// OpenAIEmbeddings (@langchain/openai) against the gateway's
// /v1/embeddings, and prints what they returned as one JSON object;
// embeddings_node_test.go checks it.
//
// Environment: EMBEDDINGS_JS the npm prefix the packages are installed
// under, GATEWAY the gateway's URL, KEY the client key, MODEL the model,
// TEXTS a JSON array of the texts to embed.
import { createRequire } from 'node:module';
import { join } from 'node:path';

process.on('uncaughtException', (e) => {
  process.stderr.write(`${e.name} ${e.status ?? ''}: ${e.message}\n${e.stack}\n`);
  process.exit(1);
});

const require = createRequire(join(process.env.EMBEDDINGS_JS, 'package.json'));
const { embedMany, embed } = require('ai');
const { createOpenAI } = require('@ai-sdk/openai');
const { OpenAIEmbeddings } = require('@langchain/openai');

const base = process.env.GATEWAY + '/v1';
const model = process.env.MODEL;
const texts = JSON.parse(process.env.TEXTS);
const out = {};

const provider = createOpenAI({ baseURL: base, apiKey: process.env.KEY });
const many = await embedMany({ model: provider.embedding(model), values: texts, maxRetries: 0 });
out.aiSdk = { embeddings: many.embeddings, tokens: many.usage.tokens };
const one = await embed({ model: provider.embedding(model), value: texts[0], maxRetries: 0 });
out.aiSdkOne = one.embedding;

const lc = new OpenAIEmbeddings({ model, apiKey: process.env.KEY, configuration: { baseURL: base }, maxRetries: 0, batchSize: 512 });
out.langchain = await lc.embedDocuments(texts);
out.langchainQuery = await lc.embedQuery(texts[0]);

// A wrong key is refused with the OpenAI SDK's 401, through LangChain.
try {
  await new OpenAIEmbeddings({ model, apiKey: 'sk-wrong', configuration: { baseURL: base }, maxRetries: 0 }).embedQuery('x');
  out.badKey = 0;
} catch (e) {
  out.badKey = e.status ?? String(e);
}
process.stdout.write(JSON.stringify(out));
