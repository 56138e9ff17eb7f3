// End-to-end check of `agentpack mcp serve` with the official TypeScript
// MCP client. Driven by mcpserver/e2e_test.go, which builds the binary and
// installs @modelcontextprotocol/sdk (pinned) into SDK_DIR.
//
// Env: AGENTPACK_BIN (the binary), FIXTURE (fixtures/quickstart),
// SDK_DIR (folder holding node_modules), WORK (a temp folder).
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const require = createRequire(path.join(process.env.SDK_DIR, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const BIN = process.env.AGENTPACK_BIN;
const READ_TOOLS = ['config_get', 'deploy', 'diff', 'doctor', 'explain', 'info', 'list', 'plan', 'preview', 'registry_list', 'resources',
  'search', 'snapshots', 'source_candidates', 'source_diff', 'source_list', 'source_scan', 'status', 'validate', 'verify'];
const WRITE_TOOLS = ['config_set', 'create_package', 'deploy_apply', 'install', 'publish', 'registry_add', 'rollback', 'source_add', 'source_remove',
  'source_update', 'uninstall'];
let checks = 0;
function check(cond, msg) {
  assert.ok(cond, msg);
  checks++;
}

// A fresh desired-state repo and fresh homes for one flow.
let envCount = 0;
function makeEnv() {
  const root = path.join(process.env.WORK, `env${envCount++}`);
  const e = {
    repo: path.join(root, 'repo'),
    home: path.join(root, 'home'),
    project: path.join(root, 'project'),
  };
  e.codex = path.join(e.home, '.codex');
  e.aphome = path.join(e.home, '.agentpack');
  fs.cpSync(process.env.FIXTURE, e.repo, { recursive: true });
  for (const d of [e.codex, e.aphome, path.join(e.project, '.git')]) fs.mkdirSync(d, { recursive: true });
  e.vars = { ...process.env, HOME: e.home, CODEX_HOME: e.codex, AGENTPACK_HOME: e.aphome };
  delete e.vars.AGENTPACK_MCP_TOKEN;
  return e;
}

// rawServer spawns the binary and speaks newline-delimited JSON-RPC by hand,
// checking that every stdout line is a JSON-RPC message.
function rawServer(env, extra = []) {
  const child = spawn(BIN, ['mcp', 'serve', '--repo', env.repo, ...extra], { cwd: env.project, env: env.vars, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting = new Map();
  const lines = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    let msg;
    try { msg = JSON.parse(line); } catch { throw new Error(`stdout line is not JSON: ${line}`); }
    assert.equal(msg.jsonrpc, '2.0', `not JSON-RPC: ${line}`);
    const w = waiting.get(msg.id);
    if (w) { waiting.delete(msg.id); w(msg); }
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child, lines, exited, stderr: () => stderr,
    request(id, method, params) {
      const p = new Promise((resolve) => waiting.set(id, resolve));
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return p;
    },
    notify(method) { child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method }) + '\n'); },
  };
}

const initParams = (v) => ({ protocolVersion: v, capabilities: {}, clientInfo: { name: 'e2e', version: '1' } });

async function negotiationOverStdio() {
  const env = makeEnv();
  for (const [ask, want] of [['2025-03-26', '2025-03-26'], ['2025-06-18', '2025-06-18'], ['2099-01-01', '2025-11-25']]) {
    const s = rawServer(env);
    const r = await s.request(1, 'initialize', initParams(ask));
    check(r.result.protocolVersion === want, `stdio: asked ${ask}, got ${r.result.protocolVersion}`);
    check(r.result.serverInfo.name === 'agentpack', 'serverInfo.name');
    s.notify('notifications/initialized');
    const list = await s.request(2, 'tools/list', {});
    check(list.result.tools.length === READ_TOOLS.length, 'read-only tools over raw stdio');
    s.child.stdin.end(); // EOF: the server exits 0
    const { code } = await s.exited;
    check(code === 0, `exit code after EOF: ${code}; stderr: ${s.stderr()}`);
    check(s.lines.length === 2, `exactly the two responses on stdout, got ${s.lines.length}`);
  }
  // SIGTERM while idle: exit 0.
  const s = rawServer(env);
  await s.request(1, 'initialize', initParams('2025-11-25'));
  s.child.kill('SIGTERM');
  const { code } = await s.exited;
  check(code === 0, `exit code after SIGTERM: ${code}`);
}

function names(list) { return list.tools.map((t) => t.name).sort(); }
function envelope(res) { return res.structuredContent; }
function errCode(res) { return res.isError ? res.structuredContent.errors[0].code : ''; }
function checkShape(res, tool) {
  check(res.content.length === 1 && res.content[0].type === 'text', `${tool}: one text block`);
  const text = res.content[0].text;
  const env = res.structuredContent;
  check(env && env.schema_version === 1, `${tool}: structuredContent is the envelope`);
  let json = text;
  if (res.isError) {
    const e = env.errors[0];
    const prefix = `[${e.code}] ${e.message}\n`;
    check(text.startsWith(prefix), `${tool}: error text starts with [CODE] message`);
    json = text.slice(prefix.length);
  }
  assert.deepEqual(JSON.parse(json), env, `${tool}: text JSON equals structuredContent`);
  check(res.isError === !env.ok || (!res.isError && env.ok), `${tool}: isError matches ok`);
  return res;
}

async function call(client, name, args = {}) {
  return checkShape(await client.callTool({ name, arguments: args }), name);
}

async function readOnlyChecks(client) {
  const tools = await client.listTools();
  assert.deepEqual(names(tools), READ_TOOLS, 'read-only tools');
  checks++;
  for (const t of tools.tools) {
    check(t.annotations.readOnlyHint === true, `${t.name}: readOnlyHint`);
    check(t.inputSchema.additionalProperties === false && t.description, `${t.name}: strict schema and description`);
  }
  const plan = await call(client, 'plan');
  check(!plan.isError && envelope(plan).command === 'plan' && envelope(plan).data.summary.create > 0, 'plan envelope');
  const denied = await call(client, 'deploy_apply', { yes: true, confirm_token: 'x' });
  check(denied.isError && errCode(denied) === 'E_WRITE_DISABLED' && denied.content[0].text.startsWith('[E_WRITE_DISABLED]'), 'read-only refuses deploy_apply');
  check(errCode(await call(client, 'rollback', { last: true, yes: true })) === 'E_WRITE_DISABLED', 'read-only refuses rollback');
  check(errCode(await call(client, 'plan', { target: 'emacs' })) === 'E_INVALID_ARGUMENT', 'bad enum');
  check(errCode(await call(client, 'plan', { nope: 1 })) === 'E_INVALID_ARGUMENT', 'unknown argument');
  check(errCode(await call(client, 'plan', { repo: '/definitely/not/here' })) === 'E_CONFIG_MISSING', 'missing repo');
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /unknown tool/i);
  checks++;
  const manifest = await client.readResource({ uri: 'agentpack://manifest' });
  check(JSON.parse(manifest.contents[0].text).version === 1, 'manifest resource');
  await assert.rejects(client.readResource({ uri: 'agentpack://modules/skill:release-notes/%2e%2e/%2e%2e/agentpack.yaml' }));
  checks++;
  const prompts = await client.listPrompts();
  check(prompts.prompts.some((p) => p.name === 'prompt_review'), 'prompts list');
  const got = await client.getPrompt({ name: 'prompt_review', arguments: { arguments: 'tests' } });
  check(got.messages[0].content.text.includes('Focus: tests'), 'prompt rendered');
}

async function writeFlow(client, env, label) {
  const tools = await client.listTools();
  assert.deepEqual(names(tools), [...READ_TOOLS, ...WRITE_TOOLS].sort(), `${label}: write tools listed`);
  checks++;
  for (const t of tools.tools.filter((t) => WRITE_TOOLS.includes(t.name))) {
    check(t.annotations.readOnlyHint !== true && t.annotations.destructiveHint === true, `${label}: ${t.name} annotations`);
    check(t.inputSchema.required.includes('yes'), `${label}: ${t.name} requires yes`);
  }
  check(errCode(await call(client, 'deploy_apply', {})) === 'E_CONFIRM_REQUIRED', `${label}: no yes`);
  check(errCode(await call(client, 'deploy_apply', { yes: true })) === 'E_CONFIRM_TOKEN_REQUIRED', `${label}: no token`);
  check(errCode(await call(client, 'deploy_apply', { yes: true, confirm_token: 'bogus' })) === 'E_CONFIRM_TOKEN_MISMATCH', `${label}: bad token`);
  const agents = path.join(env.project, 'AGENTS.md');
  const codexAgents = path.join(env.codex, 'AGENTS.md');
  const dep = envelope(await call(client, 'deploy'));
  check(/^[0-9a-f]{32}$/.test(dep.data.confirm_token) && /^[0-9a-f]{64}$/.test(dep.data.confirm_plan_hash), `${label}: token issued`);
  check(!Number.isNaN(Date.parse(dep.data.confirm_token_expires_at)), `${label}: expiry is a date`);
  check(!fs.existsSync(agents), `${label}: deploy wrote nothing`);
  const applied = envelope(await call(client, 'deploy_apply', { yes: true, confirm_token: dep.data.confirm_token }));
  check(applied.ok && applied.command === 'deploy' && applied.command_id === 'deploy --apply' && applied.data.applied === true, `${label}: deploy_apply`);
  check(fs.existsSync(agents) && fs.existsSync(codexAgents), `${label}: files written`);
  const snaps = envelope(await call(client, 'snapshots'));
  check(snaps.data.snapshots.length === 1 && snaps.data.snapshots[0].id === applied.data.snapshot_id, `${label}: snapshot recorded`);
  const rb = envelope(await call(client, 'rollback', { last: true, yes: true }));
  check(rb.ok && rb.command === 'rollback' && rb.data.removed > 0, `${label}: rollback`);
  check(!fs.existsSync(agents) && !fs.existsSync(codexAgents), `${label}: files removed by rollback`);
}

async function stdioClient(env, extra) {
  const transport = new StdioClientTransport({ command: BIN, args: ['mcp', 'serve', '--repo', env.repo, ...extra], env: env.vars, cwd: env.project, stderr: 'pipe' });
  const errors = [];
  const client = new Client({ name: 'agentpack-e2e', version: '1.0.0' });
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, errors, close: () => client.close() };
}

async function stdioFlows() {
  let c = await stdioClient(makeEnv(), []);
  check(c.client.getServerVersion().name === 'agentpack', 'TS client: serverInfo');
  await readOnlyChecks(c.client);
  check(c.errors.length === 0, `stdio read-only: transport errors ${c.errors}`);
  await c.close();
  const env = makeEnv();
  c = await stdioClient(env, ['--allow-write']);
  await writeFlow(c.client, env, 'stdio');
  check(c.errors.length === 0, `stdio write: transport errors ${c.errors}`);
  await c.close();
}

function startHTTP(env, extra, token) {
  const vars = { ...env.vars };
  if (token) vars.AGENTPACK_MCP_TOKEN = token;
  const child = spawn(BIN, ['mcp', 'serve', '--transport', 'http', '--port', '0', '--repo', env.repo, ...extra], { cwd: env.project, env: vars, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => { stdout += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const url = new Promise((resolve, reject) => {
    let buf = '';
    child.stderr.on('data', (d) => {
      buf += d;
      const m = buf.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${buf}`)));
  });
  return { child, url, exited, stdout: () => stdout };
}

async function rawPost(url, body, headers = {}) {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } });
  const text = await res.text();
  let msg = null;
  const data = text.split('\n').find((l) => l.startsWith('data: '));
  if (data) msg = JSON.parse(data.slice(6));
  else if (text.startsWith('{')) msg = JSON.parse(text);
  return { status: res.status, msg };
}

async function httpFlows() {
  const env = makeEnv();
  const token = 'e2e-token';
  const srv = startHTTP(env, ['--allow-write'], token);
  const url = await srv.url;
  const auth = { authorization: `Bearer ${token}` };
  const init = (v) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams(v) });
  check((await rawPost(url, init('2025-11-25'))).status === 401, 'http: no token → 401');
  check((await rawPost(url, init('2025-11-25'), { ...auth, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status === 403, 'http: cross-origin → 403');
  check((await rawPost(url, 'x'.repeat(5 << 20), auth)).status === 413, 'http: huge body → 413');
  for (const [ask, want] of [['2025-03-26', '2025-03-26'], ['1999-01-01', '2025-11-25']]) {
    const r = await rawPost(url, init(ask), auth);
    check(r.status === 200 && r.msg.result.protocolVersion === want, `http: asked ${ask}, got ${JSON.stringify(r.msg)}`);
  }

  const client = new Client({ name: 'agentpack-e2e-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
  const plan = await call(client, 'plan');
  check(envelope(plan).ok && envelope(plan).command === 'plan', 'http: plan envelope');
  check(errCode(await call(client, 'plan', { target: 'emacs' })) === 'E_INVALID_ARGUMENT', 'http: bad enum');
  await writeFlow(client, env, 'http');
  await client.close();

  const ro = makeEnv();
  const srv2 = startHTTP(ro, [], '');
  const c2 = new Client({ name: 'agentpack-e2e-http-ro', version: '1.0.0' });
  await c2.connect(new StreamableHTTPClientTransport(new URL(await srv2.url)));
  await readOnlyChecks(c2);
  await c2.close();

  for (const s of [srv, srv2]) {
    s.child.kill('SIGTERM');
    check((await s.exited) === 0, 'http: exit 0 on SIGTERM');
    check(s.stdout() === '', 'http: nothing on stdout');
  }
}

try {
  await negotiationOverStdio();
  await stdioFlows();
  await httpFlows();
  console.log(`OK ${checks} checks`);
  process.exit(0);
} catch (e) {
  console.error(`FAIL after ${checks} checks:`, e);
  process.exit(1);
}
