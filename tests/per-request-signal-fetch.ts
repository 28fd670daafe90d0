/**
 * A `fetch` for the SDK's streamable HTTP client that gives each request an abort signal of its
 * own. The SDK passes its one long-lived signal (aborted on close) to every request, and Node's
 * fetch (undici) adds an abort listener to it per request that only garbage collection removes:
 * a client polling for minutes piles up thousands (MaxListenersExceededWarning at 1,501). Here
 * the long-lived signal holds one listener per request in flight, removed when the response body
 * ends, fails or is cancelled, so closing the client still aborts what is in flight.
 */

/** `fetch`, with `init.signal` replaced by a per-request signal that follows it (see above). */
export async function perRequestSignalFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  const outer = init?.signal;
  if (!outer || outer.aborted) return fetch(input, init);
  const inner = new AbortController();
  const onAbort = () => inner.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  const unlink = () => outer.removeEventListener('abort', onAbort);
  let response: Response;
  try {
    response = await fetch(input, { ...init, signal: inner.signal });
  } catch (error) {
    unlink();
    throw error;
  }
  if (!response.body) {
    unlink();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          unlink();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        unlink();
        controller.error(error);
      }
    },
    cancel(reason) {
      unlink();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
