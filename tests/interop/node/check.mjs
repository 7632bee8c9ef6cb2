// Drives a running interai instance with an official MCP TypeScript SDK, the way a desktop agent would.
//
// `--sdk v1` uses @modelcontextprotocol/sdk 1.x (the initialize handshake, what most desktop agents embed);
// `--sdk v2` uses @modelcontextprotocol/client 2.x with version negotiation `auto` (protocol 2026-07-28).
// Started by tests/interop/run.sh, which serves the instance and passes, in the environment: INTEROP_MCP_URL,
// INTEROP_AUTHOR_KEY (the admin key: publishes), INTEROP_REVIEWER_KEY (another root controller: uses, reviews,
// rates), INTEROP_READER_KEY (an agent with the `read` scope only) and INTEROP_NODE_MODULES (the folder that
// tests/interop/install.sh ran `npm ci` in). Prints one line per check ("ok   …" or "FAIL …"); exits 1 if any failed.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const TOOL_NAMES = ['compare', 'get', 'publish', 'rate', 'report_usage', 'review', 'search', 'submit_experience', 'whoami'];
// Well-formed, and the ID of nothing.
const UNKNOWN_CONTENT_ID = 'cnt_01j9zq3k5m8n2p4r6t8v0w2x4y';

const { values: options } = parseArgs({ options: { sdk: { type: 'string' } } });
if (options.sdk !== 'v1' && options.sdk !== 'v2') {
  console.error('usage: check.mjs --sdk v1|v2');
  process.exit(2);
}
const url = new URL(process.env.INTEROP_MCP_URL);
// The SDKs live in the cache folder, not beside this file: resolve them from there.
const requireFromCache = createRequire(join(process.env.INTEROP_NODE_MODULES, 'package.json'));

function installedVersion(name) {
  const manifest = join(process.env.INTEROP_NODE_MODULES, 'node_modules', name, 'package.json');
  return JSON.parse(readFileSync(manifest, 'utf8')).version;
}

/** The SDK under test behind one small interface: connect with an optional key, and the label to print. */
function loadSdk(sdk) {
  if (sdk === 'v1') {
    const { Client } = requireFromCache('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = requireFromCache('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return {
      label: `typescript @modelcontextprotocol/sdk ${installedVersion('@modelcontextprotocol/sdk')} (initialize)`,
      async connect(key) {
        const client = new Client({ name: 'interai-interop', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: bearer(key) } }));
        return client;
      },
      protocolVersion: (client) => client.transport.protocolVersion,
      protocolCheck: 'connect: an initialize-era protocol negotiated',
      expectedProtocol: (version) => version !== undefined && version !== '2026-07-28',
    };
  }
  const { Client, StreamableHTTPClientTransport } = requireFromCache('@modelcontextprotocol/client');
  return {
    label: `typescript @modelcontextprotocol/client ${installedVersion('@modelcontextprotocol/client')} (2026-07-28)`,
    async connect(key) {
      const client = new Client(
        { name: 'interai-interop', version: '1.0.0' },
        { versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: bearer(key) } }));
      return client;
    },
    protocolVersion: (client) => client.getNegotiatedProtocolVersion(),
    protocolCheck: 'connect: protocol 2026-07-28 negotiated',
    expectedProtocol: (version) => version === '2026-07-28',
  };
}

function bearer(key) {
  return key === undefined ? {} : { Authorization: `Bearer ${key}` };
}

// The SDKs compile each output schema with ajv, which warns on the console about what it cannot check. A user sees
// those warnings on every connection, so they are collected here and reported by a check of their own.
const schemaWarnings = [];
const consoleWarn = console.warn;
console.warn = (...parts) => {
  schemaWarnings.push(parts.map(String).join(' '));
};

let failed = 0;
const sdk = loadSdk(options.sdk);

async function check(name, body) {
  try {
    const value = await body();
    console.log(`ok   ${sdk.label}: ${name}`);
    return value;
  } catch (error) {
    failed += 1;
    const detail = error instanceof AssertionFailure ? error.message : `the client raised ${describe(error)}`;
    console.log(`FAIL ${sdk.label}: ${name}: ${detail}`);
    return undefined;
  }
}

class AssertionFailure extends Error {}

function assert(condition, message) {
  if (!condition) {
    throw new AssertionFailure(message);
  }
}

function describe(error) {
  const code = error?.code === undefined ? '' : ` [${error.code}]`;
  const data = error?.data === undefined ? '' : ` data=${JSON.stringify(error.data)}`;
  return `${error?.constructor?.name ?? typeof error}${code}: ${error?.message ?? String(error)}${data}`;
}

function textOf(result) {
  return (result.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

function expectSuccess(result) {
  assert(!result.isError, `expected success, got isError with ${JSON.stringify(textOf(result))}`);
  assert(typeof result.structuredContent === 'object' && result.structuredContent !== null, 'no structuredContent');
  return result.structuredContent;
}

/** The spec's error as this client surfaces it: isError, structuredContent.error, and the text a model reads. */
function expectError(result, code, field) {
  assert(result.isError === true, `expected error ${code}, got success ${JSON.stringify(result.structuredContent)?.slice(0, 300)}`);
  const error = result.structuredContent?.error;
  assert(typeof error === 'object' && error !== null, `expected structuredContent.error, got ${JSON.stringify(result.structuredContent)}`);
  assert(error.code === code, `expected code ${code}, got ${JSON.stringify(error)}`);
  assert(typeof error.message === 'string' && error.message.length > 0, `no message in ${JSON.stringify(error)}`);
  const text = textOf(result);
  assert(text.includes(code) && text.includes(error.message), `the text content ${JSON.stringify(text)} lacks the code or the message`);
  if (field !== undefined) {
    assert(error.details?.field === field, `expected details.field ${field}, got ${JSON.stringify(error)}`);
  }
  return error;
}

async function callExpecting(client, name, args, code, field) {
  return expectError(await client.callTool({ name, arguments: args }), code, field);
}

async function call(client, name, args) {
  return expectSuccess(await client.callTool({ name, arguments: args }));
}

function need(value, what) {
  assert(value !== undefined, `needs ${what}, which failed above`);
  return value;
}

const slug = `typescript${options.sdk}`;
const connected = [];

await check('no key: the client sees unauthenticated', async () => {
  let client;
  try {
    client = await sdk.connect(undefined);
    await client.listTools();
  } catch (error) {
    // v1 puts the response body in the message, v2 in error.data.text: either way the user can read it.
    const seen = `${error?.message ?? ''} ${JSON.stringify(error?.data ?? null)}`;
    assert(seen.includes('unauthenticated'), `the client shows only: ${describe(error)}`);
    return;
  } finally {
    await client?.close();
  }
  throw new AssertionFailure('connected and listed tools without a key');
});

// Each client lists the tools first, as agents do; from then on the SDK checks every result against the tool's
// output schema.
const clients = await check("connect: an author's, a reviewer's and a read-only key, each listing the tools", async () => {
  for (const key of [process.env.INTEROP_AUTHOR_KEY, process.env.INTEROP_REVIEWER_KEY, process.env.INTEROP_READER_KEY]) {
    const client = await sdk.connect(key);
    connected.push(client);
    await client.listTools();
  }
  return connected;
});
if (clients === undefined) {
  await Promise.all(connected.map((client) => client.close()));
  process.exit(1);
}
const [author, reviewer, reader] = clients;

await check(sdk.protocolCheck, async () => {
  const version = sdk.protocolVersion(author);
  assert(sdk.expectedProtocol(version), `negotiated ${version}`);
});

await check('tools/list: the nine tools, each with an output schema', async () => {
  const { tools } = await author.listTools();
  const names = tools.map((tool) => tool.name).sort();
  assert(JSON.stringify(names) === JSON.stringify(TOOL_NAMES), `tools ${names}`);
  for (const tool of tools) {
    assert(tool.outputSchema?.type === 'object', `${tool.name}: output schema ${JSON.stringify(tool.outputSchema)}`);
  }
});

// whoami
await check("whoami: the caller's identity and scopes", async () => {
  const me = await call(author, 'whoami', {});
  assert(String(me.actor_id).startsWith('usr_'), `actor_id ${me.actor_id}`);
  assert(me.scopes?.includes('publish'), `scopes ${me.scopes}`);
});
await check('whoami: an unknown field is validation_failed', () =>
  callExpecting(author, 'whoami', { verbose: true }, 'validation_failed'),
);

// publish
const published = await check('publish: a procedure with a claim', async () => {
  const result = await call(author, 'publish', {
    content_type: 'procedure',
    title: `Deduplicate webhook deliveries ${slug}`,
    summary: 'Store each delivery id and skip the ones already seen.',
    body_markdown: '1. Read the delivery id.\n2. Skip it when stored.\n3. Store it after processing.',
    claims: [{ text: `Deduplicating by delivery id prevents double processing (${slug}).` }],
    subjects: [{ name: `Webhooks ${slug}`, type: 'concept' }],
    tags: ['interop'],
    idempotency_key: `interop-${slug}-publish`,
  });
  assert(String(result.id).startsWith('cnt_'), `id ${result.id}`);
  assert(String(result.revision_id).startsWith('rev_'), `revision_id ${result.revision_id}`);
  assert(String(result.claims?.[0]?.id).startsWith('clm_'), `claims ${JSON.stringify(result.claims)}`);
  return result;
});
const alternative = await check('publish: a second procedure to compare with', async () => {
  const result = await call(author, 'publish', {
    content_type: 'procedure',
    title: `Make webhook handlers idempotent ${slug}`,
    summary: 'Design each handler so that running it twice changes nothing.',
    idempotency_key: `interop-${slug}-publish-alternative`,
  });
  assert(String(result.id).startsWith('cnt_'), `id ${result.id}`);
  return result;
});
await check('publish: a title that is not a string is validation_failed', () =>
  callExpecting(author, 'publish', { content_type: 'note', title: 42 }, 'validation_failed', 'title'),
);
await check('publish: a read-only key is forbidden_scope', async () => {
  const error = await callExpecting(reader, 'publish', { content_type: 'note', title: 'not allowed' }, 'forbidden_scope');
  assert(error.details?.required_scope === 'publish', `details ${JSON.stringify(error.details)}`);
});

// search
await check('search: finds the published procedure', async () => {
  const contentId = need(published, 'the published procedure').id;
  const found = await call(reader, 'search', { query: slug, kinds: ['content'] });
  const ids = (found.results ?? []).map((result) => result.id);
  assert(ids.includes(contentId), `${contentId} not among ${ids}`);
});
await check('search: an unknown sort is validation_failed', () =>
  callExpecting(reader, 'search', { query: 'webhook', sort: 'best' }, 'validation_failed', 'sort'),
);

// get
await check('get: the published procedure with its claim', async () => {
  const content = need(published, 'the published procedure');
  const item = await call(reader, 'get', { id: content.id });
  assert(item.title === `Deduplicate webhook deliveries ${slug}`, `title ${item.title}`);
  assert(item.untrusted_content === true, 'untrusted_content is not true');
  const claimIds = (item.claims ?? []).map((claim) => claim.id);
  assert(claimIds.includes(content.claims[0].id), `claims ${claimIds}`);
});
await check('get: an unknown ID is not_found', async () => {
  const error = await callExpecting(reader, 'get', { id: UNKNOWN_CONTENT_ID }, 'not_found');
  assert(error.details?.id === UNKNOWN_CONTENT_ID, `details ${JSON.stringify(error.details)}`);
});

// compare
await check('compare: two procedures in a context', async () => {
  const first = need(published, 'the published procedure').id;
  const second = need(alternative, 'the second procedure').id;
  const comparison = await call(reader, 'compare', { ids: [first, second], context: { language: 'python' } });
  const ids = (comparison.items ?? []).map((item) => item.id);
  assert(JSON.stringify(ids) === JSON.stringify([first, second]), `items ${ids}`);
});
await check('compare: a claim is invalid_target', async () => {
  const content = need(published, 'the published procedure');
  await callExpecting(reader, 'compare', { ids: [content.id, content.claims[0].id] }, 'invalid_target');
});

// report_usage
const usage = await check('report_usage: a successful real-world use', async () => {
  const content = need(published, 'the published procedure');
  const result = await call(reviewer, 'report_usage', {
    target: content.id,
    usage_type: 'implementation',
    result: 'success',
    real_world_use: true,
    context: { language: 'python' },
    note: 'Worked without modification.',
    idempotency_key: `interop-${slug}-usage`,
  });
  assert(String(result.id).startsWith('use_'), `id ${result.id}`);
  assert(result.target_revision === content.revision_id, `target_revision ${result.target_revision}`);
  return result;
});
await check('report_usage: an unknown target is not_found', () =>
  callExpecting(reviewer, 'report_usage', { target: UNKNOWN_CONTENT_ID, usage_type: 'test', result: 'success' }, 'not_found'),
);

// review
await check('review: another controller confirms the claim', async () => {
  const claimId = need(published, 'the published procedure').claims[0].id;
  const usageId = need(usage, 'the reported use').id;
  const result = await call(reviewer, 'review', {
    target: claimId,
    verdict: 'confirmed',
    confidence: 0.9,
    rationale_markdown: 'Matches what we saw in production.',
    based_on_usage: usageId,
    idempotency_key: `interop-${slug}-review`,
  });
  assert(String(result.id).startsWith('rvw_'), `id ${result.id}`);
});
await check("review: the author's own content is self_review", async () => {
  const contentId = need(published, 'the published procedure').id;
  await callExpecting(author, 'review', { target: contentId, verdict: 'confirmed', confidence: 1 }, 'self_review');
});

// rate
await check("rate: the procedure's usefulness in a context", async () => {
  const contentId = need(published, 'the published procedure').id;
  const result = await call(reviewer, 'rate', {
    target: contentId,
    context: { language: 'python' },
    dimension: 'usefulness',
    score: 80,
    confidence: 0.8,
    idempotency_key: `interop-${slug}-rate`,
  });
  assert(String(result.id).startsWith('rat_'), `id ${result.id}`);
});
await check('rate: a revision is invalid_target', async () => {
  const revisionId = need(published, 'the published procedure').revision_id;
  await callExpecting(reviewer, 'rate', { target: revisionId, dimension: 'usefulness', score: 80 }, 'invalid_target');
});

// submit_experience
await check('submit_experience: a success with the use it was based on', async () => {
  const contentId = need(published, 'the published procedure').id;
  const result = await call(reviewer, 'submit_experience', {
    title: `Deduplication held under load ${slug}`,
    summary: 'No delivery was processed twice in a month.',
    body_markdown: 'We stored delivery ids for 30 days.',
    result: 'success',
    real_world_use: true,
    context: { environment: 'production' },
    used: [{ id: contentId, result: 'success' }],
    idempotency_key: `interop-${slug}-experience`,
  });
  assert(String(result.id).startsWith('cnt_'), `id ${result.id}`);
  assert(result.usage_ids?.length === 1, `usage_ids ${result.usage_ids}`);
});
await check('submit_experience: an unknown result is validation_failed', () =>
  callExpecting(reviewer, 'submit_experience', { title: 't', summary: 's', result: 'great' }, 'validation_failed', 'result'),
);

await check('the client printed no schema warnings', async () => {
  const distinct = [...new Set(schemaWarnings)];
  assert(distinct.length === 0, `${distinct.length} distinct warnings, e.g. ${JSON.stringify(distinct[0])}`);
});

await Promise.all(clients.map((client) => client.close()));
console.warn = consoleWarn;
process.exit(failed === 0 ? 0 : 1);
