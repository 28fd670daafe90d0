/**
 * A real SDK `Client` over the real stdio transport of the server (`serveStdio`), in this process:
 * the client's transport writes newline-delimited JSON-RPC into the server's input stream and reads
 * its output stream, as a host does with a spawned server's stdin and stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { PassThrough } from 'node:stream';
import type { App } from '../src/app.js';
import { serveStdio } from '../src/transports/stdio-server.js';

class StreamPairTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

/** An SDK client connected to `app` over stdio with `token`; `done` settles when the server has stopped. */
export async function stdioClient(app: App, token: string): Promise<{ client: Client; done: Promise<void> }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const done = serveStdio(app, { token, input, output });
  const client = new Client({ name: 'stdio-test-client', version: '1.0.0' });
  await client.connect(new StreamPairTransport(input, output));
  return { client, done };
}
