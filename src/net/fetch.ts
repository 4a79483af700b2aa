/**
 * fetch that retries a request once when the connection was reset before an answer arrived (a keep-alive socket
 * closed by the server just as it was reused). Only for requests that are safe to repeat: ledger calls (queries
 * are reads; resubmitting an identical envelope is idempotent on the ledger) and validator rounds (a validator
 * answers the same request with the same signature).
 */
export async function resetTolerantFetch(input: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (e) {
    const code = ((e as { cause?: { code?: string } }).cause?.code ?? '') as string;
    if (!['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(code) || init.signal?.aborted) throw e;
    return fetch(input, init);
  }
}
