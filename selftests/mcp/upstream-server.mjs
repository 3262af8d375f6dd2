// SPDX-License-Identifier: GPL-2.0
// An upstream MCP server built on the official TypeScript SDK, registered in the host tier's
// tools registry as "kind": "mcp" and run by agentd (selftests/host/test_mcp.c):
//   echo {text}   answers text; its description is the file $DESC_FILE, read at start (the
//                 test changes it: the rug pull agentd must refuse until accepted)
//   env {}        answers token=$UP_TOKEN (a secret agentd injects: the reply is redacted)
//   crash {}      the server exits in the middle of the call
//   write {path}  an actuating tool (report-only agents may not be granted it)
//   self {}       the server's uid, cgroup and confinement, from /proc/self
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'agentd-selftest-upstream', version: '1.0.0' });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

server.registerTool('echo', {
	description: readFileSync(process.env.DESC_FILE, 'utf8').trim(),
	inputSchema: { text: z.string().max(32) },
}, async ({ text: t }) => text(`echo: ${t}`));
server.registerTool('env', { description: 'Prints the token it was given.', inputSchema: {} },
	async () => text(`token=${process.env.UP_TOKEN ?? '(none)'}`));
server.registerTool('crash', { description: 'Exits mid-call.', inputSchema: {} },
	async () => process.exit(3));
server.registerTool('write', {
	description: 'Writes nothing, but says it would.', inputSchema: { path: z.string() },
}, async ({ path }) => text(`would write ${path}`));

server.registerTool('self', { description: 'Says how the server runs.', inputSchema: {} },
	async () => text([`uid=${process.getuid()}`,
		readFileSync('/proc/self/cgroup', 'utf8').trim(),
		...readFileSync('/proc/self/status', 'utf8').split('\n')
			.filter((l) => /^(CapEff|NoNewPrivs|Seccomp):/.test(l))].join('\n')));

await server.connect(new StdioServerTransport());
