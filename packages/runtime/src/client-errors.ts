// Requests that Node's HTTP parser refuses (oversized headers, malformed request lines) never reach
// express. By default Node answers them with a bare status line; this gives them the API's
// `{ error, message }` body too, on every server that calls it.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

const REFUSALS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers are larger than the server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time'],
  HPE_URI_TOO_LONG: [414, 'URI Too Long', 'The request target is longer than the server accepts'],
};
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'The request is not valid HTTP'];

type ParseError = NodeJS.ErrnoException & { rawPacket?: Buffer };

export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: ParseError, socket: Duplex) => {
    // The client is gone, or a response is already on its way: there is no one to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const [status, kind, message] = REFUSALS[error.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ error: kind, message });
    // A response to HEAD carries no body: a client reading one would take its bytes for the next response.
    const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${status} ${kind}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  });
}
