// Drives Google's JavaScript SDK (@google/genai) against the gateway and
// prints what it saw as one JSON object; genai_js_test.go checks it.
//
// Environment: GENAI_JS the npm prefix @google/genai is installed under,
// GATEWAY the gateway's URL, KEY the client key, MODEL the model.
import { createRequire } from 'node:module';
import { join } from 'node:path';

// A failed step ends the script with one line that says which error it was.
process.on('uncaughtException', (e) => {
  process.stderr.write(`${e.name} ${e.status ?? ''}: ${e.message}\n${e.stack}\n`);
  process.exit(1);
});

const { GoogleGenAI, ApiError } = createRequire(join(process.env.GENAI_JS, 'package.json'))('@google/genai');
const ai = new GoogleGenAI({ apiKey: process.env.KEY, httpOptions: { baseUrl: process.env.GATEWAY, apiVersion: 'v1beta' } });
const model = process.env.MODEL;
const out = {};

// status runs a call that must fail and gives its HTTP status.
async function status(call) {
  try {
    await call();
    return 0;
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    return String(e);
  }
}

const text = await ai.models.generateContent({
  model, contents: 'Say hello',
  config: { systemInstruction: 'Be brief.', temperature: 0.25, maxOutputTokens: 256 },
});
out.text = text.text;
out.finishReason = text.candidates[0].finishReason;
out.usage = text.usageMetadata;

out.chunks = [];
for await (const chunk of await ai.models.generateContentStream({ model, contents: 'Say hello' })) {
  out.chunks.push(chunk.text ?? '');
  if (chunk.usageMetadata) out.streamUsage = chunk.usageMetadata;
}

const tools = [{ functionDeclarations: [{
  name: 'get_weather', description: 'Weather for a city',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}] }];
const question = { role: 'user', parts: [{ text: 'What is the weather in Paris and London?' }] };
const first = await ai.models.generateContent({ model, contents: [question], config: { tools, thinkingConfig: { includeThoughts: true } } });
out.calls = first.functionCalls.map((c) => ({ id: c.id ?? '', name: c.name, args: c.args }));
const modelTurn = first.candidates[0].content;
out.signed = modelTurn.parts.filter((p) => p.thoughtSignature).length;
const results = first.functionCalls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { output: `${c.args.city}: 21C` } } }));
const stream = await ai.models.generateContentStream({
  model, contents: [question, modelTurn, { role: 'user', parts: results }], config: { tools },
});
out.final = '';
for await (const chunk of stream) out.final += chunk.text ?? '';

out.unknownModel = await status(() => ai.models.generateContent({ model: 'no-such-model', contents: 'hi' }));
out.rateLimited = await status(() => ai.models.generateContent({ model, contents: 'please-rate-limit-me' }));
out.rateLimitedStream = await status(async () => {
  for await (const _ of await ai.models.generateContentStream({ model, contents: 'please-rate-limit-me' }));
});
const bad = new GoogleGenAI({ apiKey: 'sk-tg-not-the-master-key', httpOptions: { baseUrl: process.env.GATEWAY, apiVersion: 'v1beta' } });
out.badKey = await status(() => bad.models.generateContent({ model, contents: 'hi' }));

process.stdout.write(JSON.stringify(out));
